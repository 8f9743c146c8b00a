# Sourced by scripts/play and scripts/test: make .venv with the project installed, once.
# Re-running is cheap: the install is redone only when pyproject.toml changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
stamp="$venv/.dicetable-installed"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
    "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
    "$venv/bin/python" -m pip install --quiet -e "$root[test]" >&2
    touch "$stamp"
fi
export PATH="$venv/bin:$PATH"
cd "$root"
