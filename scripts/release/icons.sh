#!/usr/bin/env bash
# Renders extension/icons/icon.svg into the PNG sizes the stores and browsers
# ask for (Chrome Web Store: 128, plus 16/32/48 for the toolbar and the
# extensions page; addons.mozilla.org and addons.thunderbird.net: 48 and 96).
# The PNGs are committed, so a release does not depend on the ImageMagick
# version; rerun this after changing the SVG. -strip and the excluded date/time
# chunks keep the files free of render times, so a rerun on the same
# ImageMagick (Debian's, scripts/setup.sh installs it) changes no byte.
set -euo pipefail
cd "$(dirname "$0")/../../extension/icons"
for size in 16 32 48 96 128; do
  # Render at 4x the target size, then scale down: smooth edges at 16 px.
  /usr/bin/convert -background none -density $((72 * size * 4 / 128)) icon.svg -resize "${size}x${size}" \
    -strip -define png:exclude-chunks=date,time "PNG32:icon-$size.png"
done
