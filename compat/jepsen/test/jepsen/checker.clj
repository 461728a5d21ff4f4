(ns jepsen.checker
  "Test stand-in for Jepsen's jepsen.checker: only the Checker protocol, with
  the signature Jepsen 0.3 gives it. Jepsen itself is not installable here
  (no Clojars), and the shim needs nothing else from it.")

(defprotocol Checker
  (check [checker test history opts]
    "Verify the history is correct. Returns a map like {:valid? true}."))
