#!/usr/bin/env bash
# A local ClickHouse on loopback for development and tests: installs Debian's clickhouse-server
# when missing, then runs it from a config generated under a data directory (no system service,
# nothing under /etc touched).
#   scripts/clickhouse.sh single    one node: HTTP 127.0.0.1:18123 (TCP 19000)
#   scripts/clickhouse.sh cluster   two nodes as two shards of cluster "embers":
#                                   HTTP 127.0.0.1:18124 and :18125 (TCP 19001, 19002)
#   scripts/clickhouse.sh stop      stops every node this script started
#   scripts/clickhouse.sh status    says which nodes run
#   scripts/clickhouse.sh install   only installs the package
# Idempotent: a node that already answers is left running. Waits until each node answers.
# EMBERS_CLICKHOUSE_DIR (default ${TMPDIR:-/tmp}/embers-clickhouse) holds configs, data and logs.
set -euo pipefail

base="${EMBERS_CLICKHOUSE_DIR:-${TMPDIR:-/tmp}/embers-clickhouse}"
say() { printf '\033[1;33m[clickhouse]\033[0m %s\n' "$*"; }

# Debian installs the server as /usr/bin/clickhouse (with the clickhouse-server link).
server_bin() { command -v clickhouse-server || command -v clickhouse || true; }

install() {
  [ -n "$(server_bin)" ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { say "clickhouse-server is missing and there is no sudo to install it"; exit 1; }
    sudo="sudo"
  fi
  say "installing Debian's clickhouse-server (apt)"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # policy-rc.d may refuse to start the system service: that is fine, we run our own.
  $sudo apt-get install -y -qq clickhouse-server >/dev/null
  [ -n "$(server_bin)" ] || { say "clickhouse-server did not install"; exit 1; }
}

# The cluster every node knows: the two shards of `cluster` (a single node knows it too, unused).
remote_servers() {
  cat <<EOF
  <remote_servers>
    <embers>
      <shard><replica><host>127.0.0.1</host><port>19001</port></replica></shard>
      <shard><replica><host>127.0.0.1</host><port>19002</port></replica></shard>
    </embers>
  </remote_servers>
EOF
}

write_config() { # dir http_port tcp_port interserver_port
  local dir=$1
  mkdir -p "$dir/data" "$dir/tmp" "$dir/log" "$dir/user_files" "$dir/format_schemas"
  cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/error.log</errorlog><size>10M</size><count>2</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$2</http_port>
  <tcp_port>$3</tcp_port>
  <interserver_http_port>$4</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <max_concurrent_queries>64</max_concurrent_queries>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <mark_cache_size>268435456</mark_cache_size>
$(remote_servers)
</yandex>
EOF
  cat >"$dir/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
EOF
}

answers() { curl -sf --max-time 2 "http://127.0.0.1:$1/ping" >/dev/null 2>&1; }

start_node() { # name http tcp interserver
  local name=$1 dir="$base/$1" http=$2
  if answers "$http"; then
    say "$name already answers on 127.0.0.1:$http"
    return 0
  fi
  write_config "$dir" "$2" "$3" "$4"
  local bin; bin=$(server_bin)
  # clickhouse-server is a multi-call binary: "clickhouse server" when only /usr/bin/clickhouse exists.
  local cmd=("$bin")
  [ "$(basename "$bin")" = clickhouse ] && cmd+=(server)
  setsid "${cmd[@]}" --config-file="$dir/config.xml" >"$dir/log/stdout.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  local waited=0
  until answers "$http"; do
    if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
      say "$name exited while starting; last log lines:"
      tail -n 20 "$dir/log/stdout.log" "$dir/log/error.log" 2>/dev/null || true
      exit 1
    fi
    waited=$((waited + 1))
    [ $waited -le 600 ] || { say "$name did not answer within 60 s"; exit 1; }
    sleep 0.1
  done
  say "$name answers on http://127.0.0.1:$http/ (data in $dir)"
}

stop_node() {
  local name=$1 dir="$base/$1" pid
  [ -f "$dir/pid" ] || return 0
  pid=$(cat "$dir/pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    local waited=0
    while kill -0 "$pid" 2>/dev/null; do
      waited=$((waited + 1))
      if [ $waited -gt 300 ]; then kill -9 "$pid" 2>/dev/null || true; break; fi
      sleep 0.1
    done
    say "$name stopped"
  fi
  rm -f "$dir/pid"
}

status_node() { # name http
  if answers "$2"; then echo "$1: running, http://127.0.0.1:$2/"; else echo "$1: stopped"; fi
}

if ! command -v curl >/dev/null; then
  # The readiness check asks each node's /ping over HTTP.
  say "installing curl (apt)"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq curl >/dev/null
fi
case "${1:-}" in
  install) install ;;
  single) install; start_node single 18123 19000 19010 ;;
  cluster)
    install
    start_node shard1 18124 19001 19011
    start_node shard2 18125 19002 19012
    ;;
  stop) for n in single shard1 shard2; do stop_node "$n"; done ;;
  status)
    status_node single 18123
    status_node shard1 18124
    status_node shard2 18125
    ;;
  *) echo "usage: $0 single|cluster|stop|status|install" >&2; exit 2 ;;
esac
