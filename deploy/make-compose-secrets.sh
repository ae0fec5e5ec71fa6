#!/bin/sh
# Creates the secret files deploy/compose.yaml mounts (top-level `secrets:`, read-only at
# /run/secrets/<name> in the containers): a random InfluxDB admin token and random InfluxDB and
# Grafana admin passwords, 32 random bytes each as 64 hex characters, no trailing newline.
#   deploy/make-compose-secrets.sh [folder]      (default: deploy/secrets beside this script)
# The folder is made 0700 (only you can enter it on the host); the files are 0644 inside it
# because the containers read them as different users (InfluxDB, Grafana 472, warpwatch 1000).
# A file that already exists is kept: InfluxDB takes the token and password once, when its
# volume is empty; to change them later, change them in InfluxDB too (docs/security.md).
# Needs openssl. Prints the paths it wrote or kept, never a value.
set -eu
dir=${1:-$(dirname "$0")/secrets}
mkdir -p "$dir"
chmod 0700 "$dir"
for name in influx-token influx-password grafana-admin-password; do
  file="$dir/$name"
  if [ -s "$file" ]; then
    echo "kept    $file"
    continue
  fi
  value=$(openssl rand -hex 32)
  (umask 077 && printf '%s' "$value" > "$file.tmp")
  chmod 0644 "$file.tmp"
  mv "$file.tmp" "$file"
  echo "created $file"
done
