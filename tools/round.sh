# Sourced by tools/retrain.sh and tools/train_grid.sh (from the repository's root, with ROUND
# and PYTHON set): when a step of the retraining round is done.

done_already() {  # name: the round holds the step, or its family has moved to data/models
  [ -f "$ROUND/$1/metrics.json" ] && { echo "$1: in $ROUND already"; return 0; }
  [ -f "data/models/$1/metrics.json" ] && "$PYTHON" -c 'import sys
from simul.models import registry
sys.exit(not registry.retrained(sys.argv[1]))' "data/models/$1" &&
    { echo "$1: in data/models, retrained"; return 0; }
  return 1
}
