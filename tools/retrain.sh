#!/usr/bin/env bash
# The retraining round of the speech models: each at its paper's strength, on augmented speech
# (simul.augment), in the order their parents need. Every step resumes where a stopped session
# left it (simul train continues its run; a packed step is skipped): run the script again.
#   tools/retrain.sh            # the whole chain, one training at a time, one thread each
#   tools/retrain.sh NAME       # one step
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
SIMUL=${SIMUL:-.venv/bin/simul}
RUNS=${SIMUL_RUNS:-$HOME/.cache/simul/runs}

step() {  # recipe, then `simul models pack` options
  local name=$1; shift
  [ -f "$RUNS/$name/.packed" ] && { echo "$name: packed already"; return 0; }
  echo "$name: training ($(date -u +%FT%TZ))"
  $SIMUL train "$name"
  $SIMUL models pack "$RUNS/$name/exp" "$name" "$@" --command-line "simul train $name"
  $SIMUL models eval "$name"
  touch "$RUNS/$name/.packed"
}

declare -A PACK=(
  [conformer_bpe_en-es]="--pair en-es --average 3"
  [conformer_bpe_en-de]="--pair en-de --average 3"
)
ORDER=(conformer_bpe_en-es conformer_bpe_en-de)

for name in "${@:-${ORDER[@]}}"; do
  # shellcheck disable=SC2086
  step "$name" ${PACK[$name]}
done
