(ns jepsen.store
  "Test stand-in for Jepsen's jepsen.store: only path and path!, with Jepsen's
  contract (store/<name>/<start-time>/<args...>, nil components dropped,
  nested components flattened; path! creates the parent directories). The
  tests point base-dir at a temporary directory with with-redefs."
  (:require [clojure.java.io :as io]))

(def base-dir "store")

(defn path
  ([test]
   (assert (:name test))
   (assert (:start-time test))
   (io/file base-dir (:name test) (str (:start-time test))))
  ([test & args]
   (apply io/file (path test) (->> args flatten (remove nil?) (map str)))))

(defn path!
  [& args]
  (let [f (apply path args)]
    (io/make-parents f)
    f))
