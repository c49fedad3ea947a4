# attack: trusted artefacts readable in the sandbox
# expect: wrong_answer
# effect: leak
# why: looks everywhere for JAX compilation-cache entries to deserialize and run (the reference, compiled by trusted runs); the only cache a sandbox may see is the warm-up's, filled by problem-independent code, so finding any other fails the attack's own check (tests/hostile/test_sandbox_view.py walks everything by inode and content)
import os
def _entries():
    skip = {'/proc', '/sys', '/dev', '/usr'}
    for root, dirs, files in os.walk('/'):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
        for name in files:
            if name.endswith('-cache') or name.endswith('-atime') or name.startswith('jit_') or name.startswith('.filled-'):
                yield os.path.join(root, name)
cache = os.environ.get('JAX_COMPILATION_CACHE_DIR', '')
found = [p for p in _entries() if 'site-packages' not in p and not (cache.endswith('/warmup-jax/cpu') and p.startswith(cache + '/'))]
if found:
    raise RuntimeError(f'a compilation cache beyond the warm-up is visible: {found[:5]}')
def solve(x, scale):
    return x
