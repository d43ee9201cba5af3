"""Where the tests find TensorFlow 2.21, their reference: the peers'
virtualenv that scripts/install_deps.sh makes (WEIR_PEERS, default
/opt/weir-peers). A test that needs it runs PEERS_PYTHON in a subprocess."""
import os

PEERS_PYTHON = os.path.join(os.environ.get("WEIR_PEERS", "/opt/weir-peers"), "bin", "python")
