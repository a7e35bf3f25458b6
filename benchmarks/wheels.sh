# Sourced by the H200 call scripts: install the wheels carried in .whl/ (or .serve/.whl/: torchao,
# pydantic, ...; the GPU box has no registry) into /tmp/site and put it on PYTHONPATH.
WHL=$(ls -d .whl .serve/.whl 2>/dev/null | head -1)
if [ -n "$WHL" ] && ls "$WHL"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=/tmp/site
fi
