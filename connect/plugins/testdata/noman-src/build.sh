#!/bin/sh
# Rebuilds ../noman/noman-2.5.0.jar, a real javac-compiled Connect plugin
# without ServiceLoader manifests, against Kafka's jars:
#   sh build.sh <dir holding Kafka's libs, e.g. ../../../../.cache/kafka-4.1.1/libs>
set -eu
libs=${1:?usage: build.sh KAFKA_LIBS_DIR}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
javac --release 11 -cp "$libs/*" -d "$out/classes" $(find "$here/com" -name '*.java')
printf 'Implementation-Title: noman\nImplementation-Version: 2.5.0\n' >"$out/manifest.txt"
mkdir -p "$here/../noman"
jar --create --file "$here/../noman/noman-2.5.0.jar" --manifest "$out/manifest.txt" -C "$out/classes" .
