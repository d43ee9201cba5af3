"""TF1 top-level helpers composed of existing ops (tf1api)."""
__all__ = []
