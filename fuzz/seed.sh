# Sourced by the run_*.sh scripts: the seed of a bounded fuzzing run. Seed 1 unless
# FUZZ_SEED says otherwise, so that CI runs the same inputs every time (a new finding then
# belongs to the change that caused it); FUZZ_SEED=random explores (libFuzzer's -seed=0).
FUZZ_SEED=${FUZZ_SEED:-1}
if [ "$FUZZ_SEED" = random ]; then LIBFUZZER_SEED=0; else LIBFUZZER_SEED=$FUZZ_SEED; fi
export FUZZ_SEED
