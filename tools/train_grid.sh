#!/usr/bin/env bash
# The models trained in simultaneous mode as the papers train them, every module learning
# (issue 63), after the retraining round (tools/retrain.sh) has shipped their parents:
#   p22-en-de, p22-en-es  P22 Figs. 1–2: the offline Transformer of the pair fine-tuned at
#                         k_train 3, 5, 7, 9, 11 with fixed, then adaptive word detection
#                         (transformer_bpe_PAIR_waitkK_DETECTION)
#   mma                   M20 Figs. 2b and 3: MMA on the en-de Conformer, λ = 0 first over
#                         fixed 280 ms blocks and over oracle word ends
#                         (conformer_bpe_en-de_mma_enc, conformer_bpe_en-de_mma_enc_word), then
#                         footnote 4's eight λ from the first (conformer_bpe_en-de_mma_enc_lΛ,
#                         Λ = 80 λ: the weight on AL in 80 ms encoder frames) and four of them
#                         from the second (conformer_bpe_en-de_mma_enc_word_lΛ)
# Each step trains (simul train), packs into the round's folder (data/round/NAME, beside the
# retrained parents: data/round/README.md) and scores into the model (simul models eval
# --into-model); a step whose data/round/NAME/metrics.json is committed, or whose model has
# moved to data/models (registry.retrained), is skipped, and a stopped one resumes where it
# was (simul train continues its run): run the script again.
#   tools/train_grid.sh p22-en-de &     # one lane per core, one thread per run
#   tools/train_grid.sh p22-en-es &
#   tools/train_grid.sh mma             # after either en-es lane (see "shared" below)
#   tools/train_grid.sh NAME …          # these steps, in this order
# A lane starts only from its retrained parent: a parent whose simul.json records no
# `augmentation` (simul models pack writes it from the run's recipe) is the one before the
# retraining round, and the lane is refused.
# Shared: the runs of a pair read one export of the corpus (RUNS/shared/PAIR/data, 3 speed
# copies of train, 7.5 GB) and the runs of a lane one statistics pass (RUNS/shared/LANE/
# stats); the first step of a pair exports under a lock, so a second lane of the same pair
# waits for it (p22-en-de and mma: run p22-en-de beside p22-en-es, then mma).
# Cost on one core (benchmarks/update_time.py: an update of the whole Transformer ≈ 1.5 s, of
# the whole MMA Conformer ≈ 1.8 s): a P22 model ≈ 52 min of training (2,000 updates) and
# ≈ 5 min of packing and scoring, a lane ≈ 10 h with its export and statistics; an MMA model
# ≈ 47 min (1,500 updates) and ≈ 4 min, the lane (14 models) ≈ 12 h.
{  # read whole before it runs: the script can be edited while a lane runs it
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
PYTHON=${PYTHON:-.venv/bin/python}
SIMUL=${SIMUL:-"$PYTHON -m simul"}  # this checkout's simul
RUNS=${SIMUL_RUNS:-$HOME/.cache/simul/runs}
SHARED=$RUNS/shared  # as tools/retrain.sh's: one export of a pair for all
ROUND=${SIMUL_ROUND:-data/round}  # packed here until the round's families move to data/models
SIMUL_ROUND=$(realpath -m "$ROUND")
export SIMUL_ROUND  # simul train reads the start models there first
# shellcheck source=tools/round.sh
. tools/round.sh  # done_already NAME

declare -A LANES PARENT PAIR RECIPE SETS AVERAGE LANE
for pair in en-de en-es; do
  lane=p22-$pair
  LANES[$lane]=""
  PARENT[$lane]=transformer_bpe_$pair
  for detection in fixed adaptive; do
    for k in 3 5 7 9 11; do
      name=transformer_bpe_${pair}_waitk${k}_$detection
      LANES[$lane]+=" $name"
      PAIR[$name]=$pair RECIPE[$name]=$name SETS[$name]="" AVERAGE[$name]=3 LANE[$name]=$lane
    done
  done
done
LANES[mma]=""
PARENT[mma]=conformer_bpe_en-de
for blocks in "" _word; do  # λ = 0 over fixed 280 ms blocks, then over oracle word ends
  name=conformer_bpe_en-de_mma_enc$blocks
  LANES[mma]+=" $name"
  PAIR[$name]=en-de RECIPE[$name]=$name SETS[$name]="" AVERAGE[$name]=3 LANE[$name]=mma
done
for blocks in "" _word; do  # λ = 0.001 … 0.1 of M20's footnote 4 × 80; four of them on words
  weights="0.08 0.32 0.8 1.6 3.2 4.8 6.4 8"
  [ -z "$blocks" ] || weights="0.08 0.8 3.2 8"
  for weight in $weights; do
    name=conformer_bpe_en-de_mma_enc${blocks}_l$weight
    LANES[mma]+=" $name"
    PAIR[$name]=en-de RECIPE[$name]=conformer_bpe_en-de_mma_enc${blocks}_lat AVERAGE[$name]=2
    LANE[$name]=mma
    SETS[$name]="--set espnet.decoder_conf.latency_weight=$weight --set espnet.decoder_conf.variance_weight=$weight"
  done
done

retrained() {  # the lane's parent (the round's, else the shipped one) records its
  local lane=$1 parent=${PARENT[$1]}  # augmentation, or exit 2
  local info=data/models/$parent/simul.json
  [ -f "$SIMUL_ROUND/$parent/metrics.json" ] && info=$SIMUL_ROUND/$parent/simul.json
  if ! "$PYTHON" -c 'import sys
from simul.models import registry
sys.exit(not registry.retrained(sys.argv[1]))' "$(dirname "$info")" 2>/dev/null; then
    echo "tools/train_grid.sh: lane $lane starts from the retrained $parent, and $info records" \
         "no augmentation (the model before the retraining round, or none): run" \
         "tools/retrain.sh first" >&2
    exit 2
  fi
}

share() {  # name: the run reads its pair's export and its lane's statistics (a run that
  local name=$1 run=$RUNS/$1  # has folders of its own keeps them)
  local data=$SHARED/${PAIR[$name]}/data stats=$SHARED/${LANE[$name]}/stats
  mkdir -p "$run" "$data" "$stats"
  if [ ! -e "$run/data" ] && [ ! -L "$run/data" ]; then ln -s "$data" "$run/data"; fi
  if [ ! -e "$run/stats" ] && [ ! -L "$run/stats" ]; then ln -s "$stats" "$run/stats"; fi
}

step() {  # under the step's lock: two lanes never train the same step
  local name=$1 run=$RUNS/$1 out=$ROUND/$1
  done_already "$name" && return 0
  mkdir -p "$RUNS/.locks"
  exec 9>"$RUNS/.locks/$name.lock"
  flock 9
  done_already "$name" && { flock -u 9; return 0; }
  share "$name"
  local command="simul train ${RECIPE[$name]}"  # for the card, as a user would type it
  [ "${RECIPE[$name]}" = "$name" ] || command+=" --workdir ${run/#$HOME/\~} ${SETS[$name]}"
  echo "$name: training ($(date -u +%FT%TZ))"
  local export=$SHARED/${PAIR[$name]}/data
  # shellcheck disable=SC2086
  if [ -f "$export/train_sp_aug/.done" ] && [ -f "$export/dev/.done" ]; then
    $SIMUL train "${RECIPE[$name]}" --workdir "$run" ${SETS[$name]}
  else  # the pair's first run exports the corpus: one lane at a time
    flock "$SHARED/${PAIR[$name]}.lock" \
      $SIMUL train "${RECIPE[$name]}" --workdir "$run" ${SETS[$name]}
  fi
  $SIMUL models pack "$run/exp" "$name" --pair "${PAIR[$name]}" --average "${AVERAGE[$name]}" \
    --out-root "$ROUND" --command-line "$command"
  $SIMUL models eval "$out" --into-model
  flock -u 9
  echo "$name: packed into $out ($(date -u +%FT%TZ))"
}

[ $# -gt 0 ] || { echo "usage: tools/train_grid.sh LANE|NAME … (lanes: ${!LANES[*]})" >&2; exit 2; }
names=()
for arg in "$@"; do
  # shellcheck disable=SC2206
  if [ -n "${LANES[$arg]:-}" ]; then names+=(${LANES[$arg]})
  elif [ -n "${LANE[$arg]:-}" ]; then names+=("$arg")
  else echo "tools/train_grid.sh: no lane or step $arg (lanes: ${!LANES[*]})" >&2; exit 2
  fi
done
for name in "${names[@]}"; do retrained "${LANE[$name]}"; done  # before anything runs
for name in "${names[@]}"; do step "$name"; done
exit
}
