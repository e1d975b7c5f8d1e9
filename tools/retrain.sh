#!/usr/bin/env bash
# The retraining round of the speech models: each at its paper's strength, on augmented speech
# (simul.augment), in the order their parents need. A step trains (simul train), packs into
# the round's folder (data/round/NAME, simul models pack --out-root) and scores into the model
# (simul models eval --into-model); a child trains from its retrained parent there
# (SIMUL_ROUND: simul.models.registry.start_dir), while data/models keeps serving the family
# it replaces until the whole family is retrained and moved over (data/round/README.md).
# A step is done when data/round/NAME/metrics.json is committed, or when its family has moved
# to data/models (registry.retrained), so a lane resumes from the repository on any machine;
# a stopped training resumes from its run (simul train continues it) when the run folder is
# still there: run the script again.
#   tools/retrain.sh                  # every lane, one after the other
#   tools/retrain.sh conformer &      # one lane per core (one thread per run)
#   tools/retrain.sh transformer &
#   tools/retrain.sh NAME …           # these steps, in this order
# Lanes: conformer (the en-es Conformer, then the en-de one from it), transformer (the ASR
# Transformer whose encoder starts the ST ones, then en-es and en-de), blstm (N21's: the en-es
# BLSTM, the CTC ASR of N21's cascade from it, en-de and en-pt's three), children (the
# Conformer family's simultaneous fine-tunes: H20's per-(k, s) models, P22's wait-k and
# multi-path, on the retrained Conformers; the cascades' ASR on the en-es encoder), meta
# (H20 Table 7's three models, after conformer). M20's MMA is trained with its encoder by
# tools/train_grid.sh mma, and replaces the decoder-only MMA models of data/models when the
# en-de Conformer's family moves over.
{  # read whole before it runs: the script can be edited while a lane runs it
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
SIMUL=${SIMUL:-.venv/bin/simul}
PYTHON=${PYTHON:-.venv/bin/python}
RUNS=${SIMUL_RUNS:-$HOME/.cache/simul/runs}
ROUND=${SIMUL_ROUND:-data/round}
SIMUL_ROUND=$(realpath -m "$ROUND")
export SIMUL_ROUND
# shellcheck source=tools/round.sh
. tools/round.sh  # done_already NAME

declare -A RECIPE SETS PACK STATS
add() {  # name recipe "pack options" ["--set …" (then the run is RUNS/NAME, named on the card)]
  RECIPE[$1]=$2 PACK[$1]=$3 SETS[$1]=${4:-}
}
add conformer_bpe_en-es conformer_bpe_en-es "--pair en-es --average 3"
add conformer_bpe_en-de conformer_bpe_en-de "--pair en-de --average 3"
add asr_transformer_bpe_en asr_transformer_bpe_en "--pair en-es --average 3"
add transformer_bpe_en-es transformer_bpe_en-es "--pair en-es --average 3"
add transformer_bpe_en-de transformer_bpe_en-de "--pair en-de --average 3"
add blstm_char_en-es blstm_char_en-es "--pair en-es --average 3"
add asr_blstm_char_en asr_blstm_char_en "--pair en-es --average 1"
add blstm_char_en-de blstm_char_en-de "--pair en-de --average 3"
for name in blstm_char_en-pt blstm_bpe-small_en-pt blstm_bpe-large_en-pt; do
  add "$name" "$name" "--pair en-pt --average 2"
done
for ks in 3:300 3:400 4:350 4:800 5:800; do  # H20 Table 6
  k=${ks%:*} s=${ks#*:}
  add "conformer_bpe_en-de_k${k}_s$s" conformer_bpe_en-de_waitk_stride "--pair en-de --average 2" \
    "--set espnet.decoder_conf.k_train=$k --set espnet.decoder_conf.word_ms=$s"
done
add asr_conformer_bpe_en asr_conformer_bpe_en "--pair en-es --average 3"  # cascade_en-*'s ASR
for pair in en-de en-es; do
  for kind in waitk3 waitk7 multipath; do
    add "conformer_bpe_${pair}_$kind" "conformer_bpe_${pair}_$kind" "--pair $pair --average 3"
  done
done
for name in conformer_bpe_en-de_k{3_s300,3_s400,4_s350,4_s800,5_s800} \
    conformer_bpe_en-de_{waitk3,waitk7,multipath}; do
  STATS[$name]=children-en-de  # one statistics pass for a pair's children: the same speech
done                           # and units (their parent's), and their parent's input scale
for name in conformer_bpe_en-es_{waitk3,waitk7,multipath}; do STATS[$name]=children-en-es; done

declare -A LANES=(
  [conformer]="conformer_bpe_en-es conformer_bpe_en-de"
  [transformer]="asr_transformer_bpe_en transformer_bpe_en-es transformer_bpe_en-de"
  [blstm]="blstm_char_en-es asr_blstm_char_en blstm_char_en-de blstm_char_en-pt
    blstm_bpe-small_en-pt blstm_bpe-large_en-pt"
  [children]="conformer_bpe_en-de_k3_s300 conformer_bpe_en-de_k3_s400 conformer_bpe_en-de_k4_s350
    conformer_bpe_en-de_k4_s800 conformer_bpe_en-de_k5_s800 conformer_bpe_en-de_waitk3
    conformer_bpe_en-de_waitk7 conformer_bpe_en-de_multipath conformer_bpe_en-es_waitk3
    conformer_bpe_en-es_waitk7 conformer_bpe_en-es_multipath asr_conformer_bpe_en"
)

share() {  # run pair [stats]: the run reads its pair's one export of the corpus (3 speed
  local run=$1 data=$RUNS/shared/$2/data  # copies of train, 7.5 GB) and a shared statistics
  mkdir -p "$run" "$data"                 # pass; a run with folders of its own keeps them
  if [ ! -e "$run/data" ] && [ ! -L "$run/data" ]; then ln -s "$data" "$run/data"; fi
  if [ -n "${3:-}" ] && [ ! -e "$run/stats" ] && [ ! -L "$run/stats" ]; then
    mkdir -p "$RUNS/shared/$3/stats" && ln -s "$RUNS/shared/$3/stats" "$run/stats"
  fi
}

# name: take the step's lock (two lanes never train one step); false, without the lock,
# when the step is done
claim() {
  done_already "$1" && return 1
  mkdir -p "$RUNS/.locks"
  exec 9>"$RUNS/.locks/$1.lock"
  flock 9
  done_already "$1" && { flock -u 9; return 1; }
  return 0
}

step() {  # train, pack into the round, score; under the step's lock (two lanes never share one)
  local name=$1 run=$RUNS/$1 out=$ROUND/$1
  claim "$name" || return 0
  local command="simul train ${RECIPE[$name]}"  # for the card, as a user would type it
  [ -z "${SETS[$name]}" ] || command+=" --workdir ${run/#$HOME/\~} ${SETS[$name]}"
  local pair=${PACK[$name]#--pair } && pair=${pair%% *}
  share "$run" "$pair" "${STATS[$name]:-}"
  echo "$name: training ($(date -u +%FT%TZ))"
  local export=$RUNS/shared/$pair/data
  # shellcheck disable=SC2086
  if [ -f "$export/train_sp_aug/.done" ] && [ -f "$export/dev/.done" ] && { [ -z "${STATS[$name]:-}" ] ||
      [ -f "$RUNS/shared/${STATS[$name]}/stats/train/speech_shape" ]; }; then
    $SIMUL train "${RECIPE[$name]}" --workdir "$run" ${SETS[$name]}
  else  # the first run exports the corpus (and makes the shared statistics): one at a time
    flock "$RUNS/shared/$pair.lock" $SIMUL train "${RECIPE[$name]}" --workdir "$run" ${SETS[$name]}
  fi
  # shellcheck disable=SC2086
  $SIMUL models pack "$run/exp" "$name" ${PACK[$name]} --out-root "$ROUND" \
    --command-line "$command"
  $SIMUL models eval "$out" --into-model
  [ -L "$run/data" ] || rm -rf "$run/data"  # a run's own export, once it is packed
  flock -u 9
  echo "$name: packed into $out ($(date -u +%FT%TZ))"
}

META=$RUNS/meta_round  # H20 Table 7: one meta-learning and one multi-task pre-training, then
meta() {               # three fine-tunings on the target task (woMT from the initialisation)
  local name=conformer_bpe_en-de_meta_$1 start=${2:-} out=$ROUND/conformer_bpe_en-de_meta_$1
  claim "$name" || return 0
  local command=""
  if [ -n "$start" ]; then
    echo "$start: pre-training ($(date -u +%FT%TZ))"
    $SIMUL meta-train conformer_bpe_en-de_meta --stage "$start" --workdir "$META/$start"
    command="simul meta-train conformer_bpe_en-de_meta --stage $start --workdir ${META/#$HOME/\~}/$start"$'\n'
  fi
  echo "$name: fine-tuning ($(date -u +%FT%TZ))"
  $SIMUL meta-train conformer_bpe_en-de_meta --stage finetune --workdir "$META/$1" \
    ${start:+--start "$META/$start"}
  command+="simul meta-train conformer_bpe_en-de_meta --stage finetune"
  command+="${start:+ --start ${META/#$HOME/\~}/$start} --workdir ${META/#$HOME/\~}/$1"
  $SIMUL models pack "$META/$1/exp" "$name" --pair en-de --average 2 --out-root "$ROUND" \
    --command-line "$command"
  $SIMUL models eval "$out" --into-model
  flock -u 9
  echo "$name: packed into $out ($(date -u +%FT%TZ))"
}
RECIPE[meta]=meta LANES[meta]=meta

[ $# -gt 0 ] || set -- conformer transformer blstm children meta
names=()
for arg in "$@"; do
  # shellcheck disable=SC2206
  if [ -n "${LANES[$arg]:-}" ]; then names+=(${LANES[$arg]})
  elif [ -n "${RECIPE[$arg]:-}" ]; then names+=("$arg")
  else echo "tools/retrain.sh: no lane or step $arg (lanes: ${!LANES[*]})" >&2; exit 2
  fi
done
for name in "${names[@]}"; do
  if [ "$name" = meta ]; then meta woMT; meta wMT meta; meta control multitask
  else step "$name"; fi
done
exit
}
