# Sourced by scripts/play and scripts/test: make .venv with the project installed, once.
# Re-running is cheap: the install is redone only when pyproject.toml changed. While it installs it
# says so in one line; pip's output goes to .venv/install.log and is shown only when the install fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
py="${PYTHON:-python3}"
stamp="$venv/.dicetable-installed"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
    # Another user's checkout (a shared host): say what is wrong instead of pip's "Permission denied".
    if { [ -e "$venv" ] && [ ! -w "$venv" ]; } || { [ ! -e "$venv" ] && [ ! -w "$root" ]; }; then
        owner=$(stat -c %U "$([ -e "$venv" ] && echo "$venv" || echo "$root")" 2>/dev/null || echo "another user")
        echo "dicetable: $venv needs an install and belongs to $owner, not to you ($(id -un)): ask $owner to run" \
             "scripts/play once, or install dicetable once for every user (README: \"One machine, many users\")" >&2
        exit 1
    fi
    mkdir -p "$venv"
    log="$venv/install.log"
    echo "dicetable: installing into .venv, once (about 11 s on a 2-core machine, longer while pip downloads;" \
         "pip's output: .venv/install.log)" >&2
    if ! {
        { [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"; } &&
            "$venv/bin/python" -m pip install --upgrade pip &&
            "$venv/bin/python" -m pip install -e "$root[test]" &&
            "$venv/bin/python" -m compileall -q "$root/core" "$root/net" "$root/tui"  # bytecode: an editable install writes none, and PYTHONDONTWRITEBYTECODE machines would compile at every start
    } >"$log" 2>&1; then
        cat "$log" >&2
        echo "dicetable: the install failed: pip's output is above and in $log" >&2
        exit 1
    fi
    touch "$stamp"
fi
export PATH="$venv/bin:$PATH"
cd "$root"  # scripts/test runs pytest from the root (its config, its test paths); scripts/play goes back
