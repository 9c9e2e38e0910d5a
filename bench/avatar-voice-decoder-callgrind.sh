#!/bin/sh
# Instructions pocketsphinx spends decoding the ten recordings of Debian's pocketsphinx-testdata
# (joined into one 34.4 s file), counted by callgrind: the same count whatever else the machine
# runs. Only ps_process_raw and ps_end_utt are counted (not the model load). The first set of
# options is voice mode's before issue 29 item 8, the second its present one (pocketsphinx.stream.ts).
# Usage: sh bench/avatar-voice-decoder-callgrind.sh   (needs valgrind sox pocketsphinx pocketsphinx-en-us pocketsphinx-testdata)
set -eu
DATA=/usr/share/pocketsphinx/test/data
MODEL=/usr/share/pocketsphinx/model/en-us
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
sox "$DATA"/librivox/*.wav "$DATA"/cards/*.wav -r 16000 -c 1 -b 16 "$WORK/all.wav"
SECONDS_OF_AUDIO=$(soxi -D "$WORK/all.wav")
COMMON="-infile $WORK/all.wav -hmm $MODEL/en-us -lm $MODEL/en-us.lm.bin -dict $MODEL/cmudict-en-us.dict -fwdflat no -bestpath no -maxwpf 5 -pl_window 5 -logfn /dev/null"
count() {
  # shellcheck disable=SC2086
  valgrind --tool=callgrind --callgrind-out-file="$WORK/$1.out" --toggle-collect=ps_process_raw --toggle-collect=ps_end_utt \
    pocketsphinx_continuous $COMMON $2 >"$WORK/$1.txt" 2>&1
  collected=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORK/$1.txt")
  echo "$1 ($2): $collected instructions, $(echo "$collected / $SECONDS_OF_AUDIO / 1000000" | bc) M per second of audio"
}
count before '-maxhmmpf 3000' &
count present '-maxhmmpf 2500 -ds 2 -topn 2' &
wait
