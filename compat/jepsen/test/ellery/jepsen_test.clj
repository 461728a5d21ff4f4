(ns ellery.jepsen-test
  "Tests of the Jepsen shim against the real ellery binary.

  Run from the repository root:

    ELLERY_BIN=target/release/ellery \\
      java -cp /usr/share/java/clojure.jar:compat/jepsen/src:compat/jepsen/test \\
      clojure.main -m ellery.jepsen-test

  Environment: ELLERY_BIN (the binary, else `ellery` on the PATH),
  ELLERY_CORPUS_DIR (default ../shared/corpus), ELLERY_REPO_DIR (default .).
  Exits 0 when every assertion passes, 1 otherwise.

  Every result the shim returns is compared with `=` to the map read from the
  binary's own EDN output for the same options and, where one exists, to the
  answer Elle itself gave (elle-golden results, test-histories expectations)."
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io]
            [clojure.java.shell :refer [sh]]
            [clojure.test :refer [deftest is testing run-tests]]
            [ellery.jepsen :as ej])
  (:import (clojure.lang ExceptionInfo)
           (java.io File PushbackReader)
           (java.nio.file Files)
           (java.nio.file.attribute FileAttribute)))

(def shim-loaded-without-jepsen?
  "Loading the shim (above, in the ns form) must not load any of Jepsen."
  (and (nil? (find-ns 'jepsen.checker))
       (nil? (find-ns 'jepsen.store))))

; Now the stand-ins for Jepsen (compat/jepsen/test/jepsen/).
(require 'jepsen.checker 'jepsen.store)

(def bin (ej/ellery-bin {}))

(def corpus-dir
  (io/file (or (System/getenv "ELLERY_CORPUS_DIR") "../shared/corpus")))

(def repo-dir
  (io/file (or (System/getenv "ELLERY_REPO_DIR") ".")))

;; Files

(defn- golden-stem
  "The elle-golden history whose name starts with `prefix` (e.g. \"g05\"),
  as its name without .edn."
  [prefix]
  (let [names (->> (.list (io/file corpus-dir "elle-golden" "histories"))
                   (filter #(and (.startsWith ^String % (str prefix "-"))
                                 (.endsWith ^String % ".edn")))
                   sort)]
    (assert (= 1 (count names))
            (str "one elle-golden history named " prefix "-*.edn in "
                 corpus-dir ", found " (vec names)))
    (subs (first names) 0 (- (count (first names)) 4))))

(defn- golden-history [prefix]
  (io/file corpus-dir "elle-golden" "histories" (str (golden-stem prefix) ".edn")))

(defn- golden-result
  "Elle's own answer: kind is \"strict\" or \"serializable\"."
  [prefix kind]
  (io/file corpus-dir "elle-golden" "results"
           (str (golden-stem prefix) "." kind ".edn")))

(defn- golden-file
  "A file Elle wrote under :directory for the default options."
  [prefix & path]
  (apply io/file corpus-dir "elle-golden" "results"
         (str (golden-stem prefix) "-files") path))

(defn- test-history [name]
  (io/file repo-dir "test-histories" "list-append" (str name ".edn")))

(defn- test-expected [name]
  (io/file repo-dir "test-histories" "list-append" (str name ".expected.edn")))

(defn- read-edn-file [file]
  (edn/read-string {:default tagged-literal} (slurp file)))

(defn- read-history
  "A history file as a vector of op maps (any EDN layout, comments allowed)."
  [file]
  (with-open [r (PushbackReader. (io/reader file))]
    (let [eof (Object.)]
      (loop [ops []]
        (let [op (edn/read {:eof eof} r)]
          (if (identical? eof op) ops (recur (conj ops op))))))))

(defn- temp-dir []
  (.toFile (Files/createTempDirectory "ellery-shim-test-"
                                      (make-array FileAttribute 0))))

(defn- delete-tree [^File f]
  (when (.isDirectory f)
    (run! delete-tree (.listFiles f)))
  (.delete f))

(defmacro with-temp-dir [[sym] & body]
  `(let [~sym (temp-dir)]
     (try ~@body (finally (delete-tree ~sym)))))

;; The binary, run directly

(defn- binary-result
  "The result map `ellery check ARGS FILE` prints, read back."
  [args file]
  (let [{:keys [exit out err]} (apply sh bin (concat ["check"] args [(str file)]))]
    (when-not (#{0 1 2} exit)
      (throw (ex-info (str bin " check exited " exit ": " err) {:exit exit})))
    (edn/read-string {:default tagged-literal} out)))

(def rw-register-supported?
  "Whether this ellery binary knows -m rw-register (the workload is being
  added in parallel); the rw-register tests run only when it does."
  (delay
    (not= 3 (:exit (sh bin "check" "-m" "rw-register"
                       (str (golden-history "g23")))))))

;; Tests

(deftest loads-without-jepsen
  (is shim-loaded-without-jepsen?))

(deftest binary-lookup
  (is (= "/opt/x/ellery" (ej/ellery-bin {:ellery-bin "/opt/x/ellery"})))
  (is (= (or (not-empty (System/getenv "ELLERY_BIN")) "ellery")
         (ej/ellery-bin {}))))

(def all-options
  {:consistency-models   [:serializable :snapshot-isolation]
   :anomalies            [:G0 :G1c]
   :cycle-search-timeout 500
   :directory            "/tmp/elle"
   :plot-format          :png
   :plot-timeout         100
   :max-plot-bytes       2048
   :linearizable-keys?   true
   :sequential-keys?     true
   :wfr-keys?            true})

(deftest option-translation
  (is (= ["check" "-m" "list-append" "--output" "edn"]
         (ej/ellery-args :list-append {})))
  (testing "every option; rw-register keys ignored for list-append"
    (is (= ["check" "-m" "list-append" "--output" "edn"
            "-c" "serializable,snapshot-isolation" "-a" "G0,G1c" "-s" "500"
            "-d" "/tmp/elle" "-p" "png" "-t" "100" "-b" "2048"]
           (ej/ellery-args :list-append all-options))))
  (is (= ["check" "-m" "rw-register" "--output" "edn"
          "-c" "serializable,snapshot-isolation" "-a" "G0,G1c" "-s" "500"
          "-d" "/tmp/elle" "-p" "png" "-t" "100" "-b" "2048"
          "--linearizable-keys" "--sequential-keys" "--wfr-keys"]
         (ej/ellery-args :rw-register all-options)))
  (is (thrown? ExceptionInfo
               (ej/ellery-args :list-append {:consistency-models []})))
  (is (thrown? ExceptionInfo
               (ej/ellery-args :list-append {:additional-graphs [identity]}))))

(def list-append-cases
  "[label history-file shim-options binary-flags elle's-answer-or-nil]"
  [["g05 (snapshot isolation), default options"
    (golden-history "g05") {} [] (golden-result "g05" "strict")]
   ["g13 (intermediate read), serializable"
    (golden-history "g13") {:consistency-models [:serializable]}
    ["-c" "serializable"] (golden-result "g13" "serializable")]
   ["g01 (valid)"
    (golden-history "g01") {} [] (golden-result "g01" "strict")]
   ["g1c-circular-flow, serializable"
    (test-history "g1c-circular-flow") {:consistency-models [:serializable]}
    ["-c" "serializable"] nil]
   ["g2-item-read-committed-with-anomaly, models and anomalies"
    (test-history "g2-item-read-committed-with-anomaly")
    {:consistency-models [:read-committed] :anomalies [:G2-item]}
    ["-c" "read-committed" "-a" "G2-item"]
    (test-expected "g2-item-read-committed-with-anomaly")]
   ["internal (prints the symbol ...)"
    (test-history "internal") {} [] (test-expected "internal")]])

(deftest list-append-check-matches-binary
  (doseq [[label file opts flags elle] list-append-cases]
    (testing label
      (let [result (ej/list-append-check opts (read-history file))]
        (is (= (binary-result flags file) result))
        (when elle
          (is (= (read-edn-file elle) result)))))))

(deftest results-read-as-elle-prints-them
  (let [result #(ej/list-append-check %1 (read-history %2))]
    (is (true? (:valid? (result {} (golden-history "g01")))))
    (is (= [:G1c] (:anomaly-types (result {:consistency-models [:serializable]}
                                          (test-history "g1c-circular-flow")))))
    (testing "the symbol ... (unknown prefix)"
      (is (= ['... 7]
             (-> (result {} (test-history "internal"))
                 (get-in [:anomalies :internal 1 :expected])))))
    (testing "namespaced keywords"
      (is (some #{:elle.list-append/init}
                (tree-seq coll? seq
                          (result {:consistency-models [:read-committed]
                                   :anomalies [:G2-item]}
                                  (test-history "g2-item-read-committed-with-anomaly"))))))))

(defrecord Op [index time type process f value])

(deftest history-forms
  (let [ops      (read-history (golden-history "g05"))
        expected (ej/list-append-check {} ops)]
    (testing "a lazy seq"
      (is (= expected (ej/list-append-check {} (map identity ops)))))
    (testing "records, as jepsen.history's Op (written as plain maps)"
      (is (= expected (ej/list-append-check {} (map map->Op ops)))))
    (testing "a reducible that is not a seq, as jepsen.history can be"
      (is (= expected (ej/list-append-check {} (eduction (map identity) ops)))))))

(deftest history-writer-round-trips
  (with-temp-dir [dir]
    (let [file (io/file dir "h.edn")
          ops  [{:index 0, :time 1, :type :invoke, :process 0, :f :txn
                 :value [[:append :x "a \"quoted\"\nline"] [:r 'sym nil]]}
                {:index 1, :type :info, :process :nemesis, :f :kill
                 :value {:nodes #{"n1" "n2"}, :list '(1 2 (3)), :ratio 1.5
                         :big 12345678901234567890N, :char \c, :ns/k true
                         :entry [(first {:k 1})], :seq (map inc [1 2])
                         :sorted (sorted-map :b 2 :a 1), :empty []}}
                (map->Op {:index 2, :time 3, :type :ok, :process 0, :f :txn
                          :value [[:append :x 1]]})]]
      (ej/write-history! ops file)
      (is (= 3 (count (line-seq (io/reader file)))))
      (is (= (map #(into {} %) ops) (read-history file))))))

(deftest checker-protocol
  (with-temp-dir [dir]
    (let [c      (ej/checker {:directory dir :plot-format :dot})
          file   (golden-history "g05")
          result (jepsen.checker/check c {} (read-history file) {})]
      (is (satisfies? jepsen.checker/Checker c))
      (is (= (binary-result [] file) result))
      (testing "explanation file, byte for byte as Elle's"
        (is (= (slurp (golden-file "g05" "G2-item.txt"))
               (slurp (io/file dir "G2-item.txt")))))
      (testing "plots in the requested format"
        (is (.isFile (io/file dir "G2-item" "0.dot")))
        (is (.isFile (io/file dir "sccs" "0.dot")))))))

(deftest jepsen-store-directory
  (with-temp-dir [store]
    (with-redefs [jepsen.store/base-dir (str store)]
      (let [test   {:name "ellery-shim" :start-time "20250101T000000.000Z"}
            file   (golden-history "g13")
            result (jepsen.checker/check (ej/checker {:plot-format :dot}) test
                                         (read-history file)
                                         {:subdirectory ["independent" 3]})
            elle   (io/file store "ellery-shim" "20250101T000000.000Z"
                            "independent" "3" "elle")]
        (is (= (binary-result [] file) result))
        (is (= (slurp (golden-file "g13" "G-single-item.txt"))
               (slurp (io/file elle "G-single-item.txt"))))
        (testing "no store directory for a test without :name/:start-time"
          (is (nil? (ej/store-directory {} {}))))
        (testing ":directory wins over the store"
          (with-temp-dir [dir]
            (jepsen.checker/check (ej/checker {:directory (str dir)
                                               :plot-format :dot})
                                  test (read-history file) {})
            (is (.isFile (io/file dir "G-single-item.txt")))
            (is (not (.exists (io/file store "ellery-shim"
                                       "20250101T000000.000Z" "elle"))))))))))

(deftest errors
  (let [history (read-history (golden-history "g01"))]
    (testing "ellery's exit 3 becomes an ex-info with its stderr"
      (let [e (try (ej/list-append-check {:consistency-models [:no-such-model]}
                                         history)
                   nil
                   (catch ExceptionInfo e e))]
        (is (= 3 (:exit (ex-data e))))
        (is (re-find #"no-such-model" (str (:stderr (ex-data e)))))))
    (testing "bad input"
      (is (thrown-with-msg? ExceptionInfo #"ellery exited with status 3"
                            (ej/list-append-check {} (conj history [:not-an-op])))))
    (testing "binary not found"
      (is (thrown-with-msg? ExceptionInfo #"ELLERY_BIN"
                            (ej/list-append-check
                              {:ellery-bin "/nonexistent/ellery"} history))))))

(deftest rw-register-check-matches-binary
  (if-not @rw-register-supported?
    (println "skipping rw-register: this ellery binary has no -m rw-register")
    (do
      (let [file (golden-history "g27")
            result (ej/rw-register-check {} (read-history file))
            inferred (ej/rw-register-check {:algorithm :infer}
                                           (read-history file))]
        (is (= (binary-result ["-m" "rw-register"] file) result))
        ;; Elle's inference, exactly as Elle answers
        (is (= (read-edn-file (golden-result "g27" "strict")) inferred))
        ;; auto: the SAT checker's exact counterexample where Elle's
        ;; partial version orders see nothing
        (is (= false (:valid? result)))
        (is (= [:G2-item] (vec (:anomaly-types result)))))
      (let [file (golden-history "g39")]
        (is (= (binary-result ["-m" "rw-register" "-c" "serializable"
                               "--linearizable-keys" "--wfr-keys"] file)
               (ej/rw-register-check {:consistency-models [:serializable]
                                      :linearizable-keys? true
                                      :wfr-keys? true}
                                     (read-history file)))))
      (with-temp-dir [dir]
        (let [file (golden-history "g25")]
          (is (= (binary-result ["-m" "rw-register"] file)
                 (jepsen.checker/check
                   (ej/rw-register-checker {:directory dir})
                   {} (read-history file) {}))))))))

(defn -main [& _]
  (let [{:keys [fail error]} (run-tests 'ellery.jepsen-test)]
    (shutdown-agents)
    (System/exit (if (zero? (+ fail error)) 0 1))))
