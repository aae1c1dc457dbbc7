#!/usr/bin/env bash
# Installs the Trino server and CLI the engine test runs
# (integration/engine_trino_test.go) into a cache outside the repository:
#
#   $CACHE/trino/server/        trino-server-$VERSION unpacked (bin/, lib/, plugin/)
#   $CACHE/trino/trino-cli.jar  the CLI's executable jar
#   $CACHE/trino/java           a symlink to the Java Trino runs on
#   $CACHE/trino/stamp          the installed version; present only when complete
#
# CACHE is $CAIRN_ENGINES, or ${XDG_CACHE_HOME:-$HOME/.cache}/cairn/engines.
# Both artifacts come from Maven Central by name (mvn dependency:copy, the
# version in pom.xml beside this script); the tar.gz is removed once
# unpacked (Maven's local repository keeps its own copy). Idempotent: a
# stamp naming the installed version short-cuts a second run.
#
# Trino 476 needs Java 22 or newer: TRINO_JAVA_HOME (default
# /usr/lib/jvm/temurin-25-jdk-amd64) must hold it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${CAIRN_ENGINES:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/engines}
dir=$cache/trino
java_home=${TRINO_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}

version=$(sed -n 's:.*<trino.version>\(.*\)</trino.version>.*:\1:p' "$here/pom.xml")
if [ -z "$version" ]; then
	echo "trino install: no <trino.version> in $here/pom.xml" >&2
	exit 1
fi

if [ "$(cat "$dir/stamp" 2>/dev/null)" = "$version" ] && [ -x "$dir/server/bin/launcher" ] && [ -f "$dir/trino-cli.jar" ]; then
	echo "trino install: Trino $version already in $dir"
	exit 0
fi

if ! "$java_home/bin/java" -version >/dev/null 2>&1; then
	echo "trino install: no Java at $java_home (Trino $version needs Java 22 or newer; set TRINO_JAVA_HOME)" >&2
	exit 1
fi
if ! command -v mvn >/dev/null; then
	echo "trino install: mvn not found (apt-get install maven)" >&2
	exit 1
fi

start=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir/download"
echo "trino install: fetching io.trino:trino-server:$version (tar.gz) and io.trino:trino-cli:$version (executable jar)"
mvn -B -q -f "$here/pom.xml" dependency:copy -DoutputDirectory="$dir/download"

tmp=$dir/server.unpack
mkdir -p "$tmp"
tar -xzf "$dir/download/trino-server.tar.gz" -C "$tmp"
mv "$tmp/trino-server-$version" "$dir/server"
rmdir "$tmp"
mv "$dir/download/trino-cli.jar" "$dir/trino-cli.jar"
rm -rf "$dir/download"
ln -s "$java_home" "$dir/java"

echo "$version" >"$dir/stamp"
echo "trino install: Trino $version in $dir ($(du -sh "$dir" | cut -f1), $(($(date +%s) - start))s)"
