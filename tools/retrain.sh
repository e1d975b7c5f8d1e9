#!/usr/bin/env bash
# The retraining round of the speech models: each at its paper's strength, on augmented speech
# (simul.augment), in the order their parents need. Every step resumes where a stopped session
# left it (simul train continues its run; a packed step is skipped): run the script again.
#   tools/retrain.sh                  # every lane, one after the other
#   tools/retrain.sh conformer &      # one lane per core: conformer, transformer
#   tools/retrain.sh transformer &
#   tools/retrain.sh NAME …           # these recipes, in this order
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
  $SIMUL models eval "$name" --into-model
  touch "$RUNS/$name/.packed"
  echo "$name: packed ($(date -u +%FT%TZ))"
}

declare -A PACK=(
  [conformer_bpe_en-es]="--pair en-es --average 3"
  [conformer_bpe_en-de]="--pair en-de --average 3"
  [asr_transformer_bpe_en]="--pair en-es --average 3"
  [transformer_bpe_en-es]="--pair en-es --average 3"
  [transformer_bpe_en-de]="--pair en-de --average 3"
)
declare -A LANES=(
  [conformer]="conformer_bpe_en-es conformer_bpe_en-de"
  [transformer]="asr_transformer_bpe_en transformer_bpe_en-es transformer_bpe_en-de"
)

[ $# -gt 0 ] || set -- conformer transformer
names=()
for arg in "$@"; do
  # shellcheck disable=SC2206
  if [ -n "${LANES[$arg]:-}" ]; then names+=(${LANES[$arg]}); else names+=($arg); fi
done
for name in "${names[@]}"; do
  [ -n "${PACK[$name]:-}" ] || { echo "tools/retrain.sh: no step $name" >&2; exit 2; }
  # shellcheck disable=SC2086
  step "$name" ${PACK[$name]}
done
