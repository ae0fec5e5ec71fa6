#!/bin/sh
# InfluxDB 2.x init hook (/docker-entrypoint-initdb.d, runs once after `influx setup`):
# maps the InfluxQL database/retention policy warpwatch/autogen onto the bucket of the same
# name, so the estimator (v2 write API, bucket "<database>/<retention policy>") and Grafana
# (InfluxQL, database "warpwatch") see the same data as on InfluxDB 1.8.
set -eu
bucket_id=$(influx bucket list --org "${DOCKER_INFLUXDB_INIT_ORG}" --name "${DOCKER_INFLUXDB_INIT_BUCKET}" --hide-headers | cut -f 1)
influx v1 dbrp create \
  --org "${DOCKER_INFLUXDB_INIT_ORG}" \
  --bucket-id "${bucket_id}" \
  --db "${WARPWATCH_INFLUX_DATABASE:-warpwatch}" \
  --rp autogen \
  --default
