"""``python -m ui.serve``, the workshop command the README gives: the app as N processes behind
HAProxy.  The supervisor is ``ui.serving.supervisor``."""

from ui.serving.supervisor import main

if __name__ == "__main__":
    main()
