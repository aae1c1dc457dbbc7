#!/usr/bin/env bash
# install.sh installs what the engine tests (integration/engine_*_test.go)
# run, from the registries by package name, into a cache outside the
# repository:
#   $CACHE/venv   a Python virtualenv with requirements.txt (pyspark,
#                 pyiceberg, pyarrow), from PyPI
#   $CACHE/jars   the jars pom.xml names (hadoop-aws and its AWS SDK,
#                 Iceberg's Spark runtime and AWS bundle), from Maven
#                 Central through mvn and the machine's ~/.m2 settings
# CACHE is $CAIRN_ENGINES, or ${XDG_CACHE_HOME:-$HOME/.cache}/cairn/engines.
#
# It is idempotent: $CACHE/stamp records what was installed (a digest of
# requirements.txt, pom.xml and the interpreter), written last, and a run
# that finds the stamp current does nothing. A changed pin, or a run that
# stopped halfway, installs afresh. Runs are serialized by a lock in CACHE.
# The last line of its output is the cache directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${CAIRN_ENGINES:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/engines}
# Each step is bounded; a registry that stops answering fails the install.
step_timeout=${CAIRN_ENGINES_TIMEOUT:-1800}

die() { echo "engines: $*" >&2; exit 1; }

# The interpreter: Debian's /usr/bin/python3 when it can make a venv (as the
# other integration tests prefer it), else python3 on PATH.
python=""
for p in /usr/bin/python3 "$(command -v python3 || true)"; do
	if [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
		python=$p
		break
	fi
done
[ -n "$python" ] || die "needs Python 3.10 or later with venv and ensurepip (Debian: apt-get install python3-venv)"
command -v java >/dev/null || die "needs Java 17 or later on PATH for Spark (Debian: apt-get install openjdk-17-jre-headless)"
java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
[ "${java_major:-0}" -ge 17 ] 2>/dev/null || die "Spark 4 needs Java 17 or later; java on PATH is ${java_major:-unknown}"
command -v mvn >/dev/null || die "needs mvn to fetch Spark's jars (Debian: apt-get install maven)"

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
exec 9>"$cache/.lock"
flock -w "$step_timeout" 9 || die "another install holds $cache/.lock"

want="sha256 $(cat "$here/requirements.txt" "$here/pom.xml" | sha256sum | cut -d' ' -f1) $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
if [ -f "$cache/stamp" ] && [ "$(cat "$cache/stamp")" = "$want" ] &&
	[ -x "$cache/venv/bin/python" ] && [ -d "$cache/jars" ]; then
	echo "engines: up to date"
	echo "$cache"
	exit 0
fi

start=$(date +%s)
rm -f "$cache/stamp"

echo "engines: Python packages into $cache/venv ($python)"
rm -rf "$cache/venv"
"$python" -m venv "$cache/venv"
timeout "$step_timeout" "$cache/venv/bin/python" -m pip install --no-input \
	--disable-pip-version-check --use-pep517 -r "$here/requirements.txt" >"$cache/pip.log" 2>&1 ||
	die "pip install failed (exit $?); its output:
$(tail -n 40 "$cache/pip.log")"

echo "engines: jars into $cache/jars (mvn)"
rm -rf "$cache/jars.new"
timeout "$step_timeout" mvn -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
	-DincludeScope=runtime -DoutputDirectory="$cache/jars.new" >"$cache/mvn.log" 2>&1 ||
	die "mvn dependency:copy-dependencies failed (exit $?); its output:
$(tail -n 40 "$cache/mvn.log")"
rm -rf "$cache/jars"
mv "$cache/jars.new" "$cache/jars"

echo "$want" >"$cache/stamp"
echo "engines: installed in $(($(date +%s) - start))s: venv $(du -sh "$cache/venv" | cut -f1), jars $(du -sh "$cache/jars" | cut -f1)"
echo "$cache"
