# attack: early exit
# expect: runtime_error
# effect: none
# why: sys.exit(0) while the module loads
import sys
sys.exit(0)
