#!/usr/bin/env bash
# Rebuilds the default models committed here (deterministic: fixed data,
# fixed splits, pinned scikit-learn). Run from anywhere: bash models/default/rebuild.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cli() { node --import tsx models/cli.ts "$@"; }
# Spam: binary logistic regression (liblinear) on SpamAssassin's boolean
# features (each present feature counts 1), 2^16 hashed rows, its threshold
# chosen for a 0.1 % false-positive rate on out-of-fold training ham (the
# default --target-fpr). Boolean features hold far more spam at that rate than
# counts. T comes from the trained weights (models/README.md, "Quantization and
# the choice of T"): 14-bit weights and at most 1024 rows per email give T = 20,
# the largest T whose key-switching key has two digits
# (docs/crypto.md#per-user-key-switching), with no float/quantized change on the
# held-out split; each further bit of b_in adds a bit of T, 256 bytes to every
# email's ciphertext, and from T = 21 a third KSK digit.
cli train --task spam --algorithm lr --boolean --corpus spamassassin --N 65536 --b-in 14 --lmax 1024 \
  --out models/default/spam.pmfm --meta-out models/default/spam.public.json
# Topics: multinomial NB on 20 Newsgroups (bydate train split), 2^14 rows, float
# weights left out to keep the repository small; public candidate model on 5%.
cli train --task topics --algorithm mnb --corpus 20news --N 16384 --no-float \
  --out models/default/topics.pmfm --meta-out models/default/topics.public.json \
  --public-out models/default/topics-candidates.pmfm --public-fraction 0.05
