#!/usr/bin/env bash
# Rebuilds the default models committed here (deterministic: fixed data,
# fixed splits, pinned scikit-learn). Run from anywhere: bash models/default/rebuild.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cli() { node --import tsx models/cli.ts "$@"; }
# Spam: binary logistic regression (liblinear) on SpamAssassin, 2^16 hashed rows;
# 12-bit weights and at most 1024 rows per email give these weights T = 24, which
# keeps the per-email traffic under 10 KB with no accuracy or float/quantized change.
cli train --task spam --algorithm lr --corpus spamassassin --N 65536 --b-in 12 --lmax 1024 \
  --out models/default/spam.pmfm --meta-out models/default/spam.public.json
# Topics: multinomial NB on 20 Newsgroups (bydate train split), 2^14 rows, float
# weights left out to keep the repository small; public candidate model on 5%.
cli train --task topics --algorithm mnb --corpus 20news --N 16384 --no-float \
  --out models/default/topics.pmfm --meta-out models/default/topics.public.json \
  --public-out models/default/topics-candidates.pmfm --public-fraction 0.05
