"""ClusterSpec: the tasks of a cluster, job name -> task index -> "host:port"
(TensorFlow's tf.train.ClusterSpec, same constructor forms, methods and
errors). Pure Python: it works in every build, with or without the
distributed runtime."""

__all__ = ["ClusterSpec"]


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _check_string(value, what):
    # Kept as given, bytes included, as TensorFlow keeps them.
    if not isinstance(value, (str, bytes)):
        raise TypeError("%s %r must be bytes or unicode" % (what, value))
    return value


class ClusterSpec:
    """A cluster as jobs of tasks.

    `cluster` is a dict from job name to a list of addresses (task i is the
    i-th) or to a dict from task index to address (sparse jobs); or another
    ClusterSpec; or a ClusterDef message (anything with a repeated `job` of
    `name` and a `tasks` map, such as weir's or TensorFlow's ClusterDef).
    """

    def __init__(self, cluster):
        if isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                job_name = _check_string(job_name, "Job name")
                if isinstance(tasks, (list, tuple)):
                    job = {i: _check_string(address, "Task address")
                           for i, address in enumerate(tasks)}
                elif isinstance(tasks, dict):
                    job = {int(i): _check_string(address, "Task address")
                           for i, address in tasks.items()}
                else:
                    raise TypeError("The tasks for job %r must be a list or a dictionary from "
                                    "integers to strings." % job_name)
                self._cluster_spec[job_name] = job
        elif isinstance(cluster, ClusterSpec):
            # Through its ClusterDef, as TensorFlow does: jobs sorted, text decoded.
            self._cluster_spec = {}
            for job in sorted(cluster._cluster_spec, key=_text):
                self._cluster_spec[_text(job)] = {
                    i: _text(address) for i, address in cluster._cluster_spec[job].items()}
        elif hasattr(cluster, "job") and not isinstance(cluster, (str, bytes)):
            self._cluster_spec = {}
            for job in sorted(cluster.job, key=lambda job: job.name):
                self._cluster_spec[job.name] = {int(i): str(address)
                                                for i, address in job.tasks.items()}
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")

    def __bool__(self):
        return bool(self._cluster_spec)

    def __eq__(self, other):
        if isinstance(other, ClusterSpec):
            return self._cluster_spec == other._cluster_spec
        return self._cluster_spec == other

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # mutable-looking and compared by value, as TensorFlow's

    def __str__(self):
        as_dict = self.as_dict()
        items = ", ".join("%r: %r" % (job, as_dict[job]) for job in sorted(as_dict))
        return "ClusterSpec({" + items + "})"

    __repr__ = __str__

    @property
    def jobs(self):
        """The job names, in the order the spec gave them."""
        return list(self._cluster_spec.keys())

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError("No such job in cluster: %r" % job_name) from None

    def as_dict(self):
        """Each job as a list of addresses if its indices are 0..n-1, else as
        a dict from index to address."""
        result = {}
        for job_name, tasks in self._cluster_spec.items():
            if not tasks:
                result[job_name] = []
            elif max(tasks) + 1 == len(tasks):
                result[job_name] = self.job_tasks(job_name)
            else:
                result[job_name] = {i: tasks[i] for i in sorted(tasks)}
        return result

    def as_cluster_def(self):
        """A weir ClusterDef message (TensorFlow's field numbers), jobs sorted
        by name."""
        from weir.core import protos
        cluster_def = protos.ClusterDef()
        for job_name in sorted(self._cluster_spec, key=_text):
            job = cluster_def.job.add()
            job.name = _text(job_name)
            for index, address in sorted(self._cluster_spec[job_name].items()):
                job.tasks[index] = _text(address)
        return cluster_def

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError("No task with index %r in job %r" % (task_index, job_name)) from None

    def job_tasks(self, job_name):
        """The job's addresses by index; None where the index has no task."""
        job = self._job(job_name)
        if not job:
            return []
        result = [None] * (max(job) + 1)
        for index, address in job.items():
            result[index] = address
        return result
