(ns ellery.jepsen
  "Run ellery, the Rust reimplementation of Elle, from a Jepsen test.

  Drop-in replacements:

    jepsen.tests.cycle.append/checker  ->  ellery.jepsen/checker
    jepsen.tests.cycle.wr/checker      ->  ellery.jepsen/rw-register-checker
    elle.list-append/check             ->  ellery.jepsen/list-append-check
    elle.rw-register/check             ->  ellery.jepsen/rw-register-check

  Each takes Elle's option map and returns Elle's result map, read back from
  the EDN that `ellery check` prints, so a test's results.edn looks as it does
  with Elle. The history (a seq of op maps, or a jepsen.history, which is
  seqable) is written to a temporary file, one op per line, and checked with

    ellery check -m <workload> --output edn [flags] FILE

  Options, translated to ellery's flags:

    :consistency-models    [:serializable ...]  -> -c serializable,...
                           (omitted: ellery's default, strict-serializable,
                           as Elle)
    :anomalies             [:G0 :G1c ...]       -> -a G0,G1c
    :cycle-search-timeout  ms                   -> -s
    :directory             path                 -> -d (explanation files and
                                                   plots)
    :plot-format           :svg | :png | :dot   -> -p
    :plot-timeout          ms                   -> -t
    :max-plot-bytes        bytes                -> -b
    :linearizable-keys?    rw-register only     -> --linearizable-keys
    :sequential-keys?      rw-register only     -> --sequential-keys
    :wfr-keys?             rw-register only     -> --wfr-keys

  Other Elle options are ignored, except :additional-graphs (functions, which
  cannot cross a process boundary): it is refused with an exception rather
  than silently checking something else.

  Options of the shim itself:

    :algorithm     :auto (default) | :infer | :mini | :sat -> --algorithm
                   (:infer reproduces Elle's inference exactly; :auto may
                   replace a valid rw-register verdict with an exact
                   counterexample Elle's inference cannot see)

    :ellery-bin    path of the ellery binary
    :ellery-model  :list-append (default) or :rw-register, for `checker`

  The binary is found as: option :ellery-bin, else the environment variable
  ELLERY_BIN, else `ellery` on the PATH.

  Like Jepsen's own Elle checkers, `checker` writes explanation files and plots
  to (jepsen.store/path! test (:subdirectory checker-opts) \"elle\"), unless
  the options name a :directory. jepsen.store and jepsen.checker are loaded
  lazily (requiring-resolve), so this namespace also loads, and
  list-append-check / rw-register-check work, without Jepsen on the classpath.

  ellery's exit codes 0, 1 and 2 (valid, invalid, unknown) return the result
  map. Any other exit (3: bad input or usage) throws an ex-info carrying
  :exit, :stderr and :command; Jepsen's checker/check-safe turns that into an
  {:valid? :unknown, :error ...} result, as it does for Elle's exceptions.
  ellery's standard error on success (e.g. a note that ops without an integer
  :process were ignored) is kept as metadata :ellery/stderr on the result."
  (:require [clojure.edn :as edn]
            [clojure.string :as str])
  (:import (java.io BufferedWriter File FileOutputStream OutputStreamWriter
                    Writer)
           (java.nio.charset StandardCharsets)
           (java.util List)))

(set! *warn-on-reflection* true)

(defn ellery-bin
  "The ellery binary to run: option :ellery-bin, else $ELLERY_BIN, else
  `ellery` (looked up on the PATH)."
  [opts]
  (or (some-> (:ellery-bin opts) str)
      (not-empty (System/getenv "ELLERY_BIN"))
      "ellery"))

(defn- flag-name
  "A keyword, symbol or string option value as ellery spells it on the
  command line: :serializable -> \"serializable\"."
  [x]
  (if (or (keyword? x) (symbol? x)) (name x) (str x)))

(defn- comma-list [xs]
  (str/join "," (map flag-name xs)))

(defn ellery-args
  "The arguments of `ellery` (without the binary and the history file) that
  check a history of workload `model` (:list-append or :rw-register) with
  Elle's option map `opts`."
  [model opts]
  (when (contains? opts :additional-graphs)
    (throw (ex-info (str "ellery.jepsen: :additional-graphs (graph functions) "
                         "cannot be passed to ellery; express the extra orders "
                         "through :consistency-models instead")
                    {:type :ellery/unsupported-option
                     :option :additional-graphs})))
  (let [models (:consistency-models opts)]
    (when (and (some? models) (empty? models))
      (throw (ex-info (str "ellery.jepsen: ellery needs at least one consistency "
                           "model; got :consistency-models " (pr-str models))
                      {:type :ellery/unsupported-option
                       :option :consistency-models})))
    (cond-> ["check" "-m" (flag-name model) "--output" "edn"]
      (seq models)                     (into ["-c" (comma-list models)])
      (seq (:anomalies opts))          (into ["-a" (comma-list (:anomalies opts))])
      (:cycle-search-timeout opts)     (into ["-s" (str (long (:cycle-search-timeout opts)))])
      (:directory opts)                (into ["-d" (str (:directory opts))])
      (:plot-format opts)              (into ["-p" (flag-name (:plot-format opts))])
      (:plot-timeout opts)             (into ["-t" (str (long (:plot-timeout opts)))])
      (:max-plot-bytes opts)           (into ["-b" (str (long (:max-plot-bytes opts)))])
      (:algorithm opts)                (into ["--algorithm" (flag-name (:algorithm opts))])
      (and (= :rw-register (keyword model))
           (:linearizable-keys? opts)) (conj "--linearizable-keys")
      (and (= :rw-register (keyword model))
           (:sequential-keys? opts))   (conj "--sequential-keys")
      (and (= :rw-register (keyword model))
           (:wfr-keys? opts))          (conj "--wfr-keys"))))

(declare write-edn!)

(defn- write-items!
  "Writes the elements of `xs` separated by `sep`; with `entries?`, `xs` is a
  map and each entry is written as `k v`."
  [^Writer w xs ^String sep entries?]
  (if (and (vector? xs) (not entries?))
    (let [^clojure.lang.Indexed v xs
          n (count xs)]
      (loop [i 0]
        (when (< i n)
          (when (pos? i) (.write w sep))
          (write-edn! w (.nth v i))
          (recur (inc i)))))
    (loop [s (seq xs), first? true]
      (when s
        (when-not first? (.write w sep))
        (let [x (first s)]
          (if entries?
            (do (write-edn! w (key x))
                (.write w " ")
                (write-edn! w (val x)))
            (write-edn! w x)))
        (recur (next s) false)))))

(defn- write-edn!
  "Writes `x` as EDN, as `pr` would, except that records inside it are left to
  `pr` (a tagged literal). The shapes of Jepsen ops (keywords, integers, nil,
  vectors, maps) are written directly, several times faster than `pr`;
  anything else goes through `pr`."
  [^Writer w x]
  (cond
    (keyword? x)       (.write w (str x))
    (nil? x)           (.write w "nil")
    (or (instance? Long x) (instance? Integer x))
    (.write w (str x))
    (vector? x)        (do (.write w "[") (write-items! w x " " false) (.write w "]"))
    (and (map? x) (not (record? x)))
    (do (.write w "{") (write-items! w x ", " true) (.write w "}"))
    (boolean? x)       (.write w (if x "true" "false"))
    (seq? x)           (do (.write w "(") (write-items! w x " " false) (.write w ")"))
    (set? x)           (do (.write w "#{") (write-items! w x " " false) (.write w "}"))
    :else              (pr x)))

(defn- write-op!
  "Writes one op as an EDN map on one line. Records (jepsen.history's Op) are
  written as plain maps, keys in their own order, so no reader tag appears."
  [^Writer w op]
  (if (map? op)
    (do (.write w "{")
        (write-items! w op ", " true)
        (.write w "}\n"))
    (do (write-edn! w op)
        (.write w "\n"))))

(defn write-history!
  "Writes a history (any seqable or reducible of op maps) to `file` as
  Jepsen EDN, one op per line."
  [history ^File file]
  (with-open [w (BufferedWriter.
                  (OutputStreamWriter. (FileOutputStream. file)
                                       StandardCharsets/UTF_8)
                  (* 1024 1024))]
    (binding [*out*                  w
              *print-length*         nil
              *print-level*          nil
              *print-meta*           false
              *print-dup*            false
              *print-readably*       true
              *print-namespace-maps* false]
      (run! (fn [op] (write-op! w op)) history))
    file))

(defn- read-result
  "Reads ellery's printed result map. Unknown tags become tagged-literal
  objects rather than errors."
  [^String s]
  (edn/read-string {:default tagged-literal} s))

(defn- delete-quietly [^File f]
  (when f (.delete f)))

(defn run-ellery
  "Checks `history` with the ellery binary: workload `model`, Elle's options
  `opts`. Returns the result map, or throws ex-info if ellery exits with
  anything but 0 (valid), 1 (invalid) or 2 (unknown)."
  [model opts history]
  (let [args (ellery-args model opts)
        hist (File/createTempFile "ellery-history-" ".edn")
        out  (File/createTempFile "ellery-result-" ".edn")
        err  (File/createTempFile "ellery-stderr-" ".txt")]
    (try
      (write-history! history hist)
      (let [cmd  (-> [(ellery-bin opts)] (into args) (conj (.getPath hist)))
            pb   (doto (ProcessBuilder. ^List cmd)
                   (.redirectOutput out)
                   (.redirectError err))
            ^Process proc
            (try (.start pb)
                 (catch java.io.IOException e
                   (throw (ex-info
                            (str "ellery.jepsen: cannot run " (first cmd)
                                 " (" (.getMessage e) "); set the "
                                 ":ellery-bin option or ELLERY_BIN, or "
                                 "put ellery on the PATH")
                            {:type :ellery/not-found, :command cmd}
                            e))))
            _    (.close (.getOutputStream proc))
            exit (.waitFor proc)
            stderr (slurp err :encoding "UTF-8")]
        (if (#{0 1 2} exit)
          (let [s (slurp out :encoding "UTF-8")]
            (when (str/blank? s)
              (throw (ex-info (str "ellery.jepsen: ellery printed no result "
                                   "(exit " exit ")\n" stderr)
                              {:type :ellery/error, :exit exit
                               :stderr stderr, :command cmd})))
            (cond-> (read-result s)
              (not (str/blank? stderr))
              (vary-meta assoc :ellery/stderr stderr)))
          (throw (ex-info (str "ellery exited with status " exit ": "
                               (str/trim stderr))
                          {:type :ellery/error, :exit exit
                           :stderr stderr, :command cmd}))))
      (finally
        (delete-quietly hist)
        (delete-quietly out)
        (delete-quietly err)))))

(defn list-append-check
  "Like elle.list-append/check: checks a list-append history with Elle's
  options and returns Elle's result map."
  ([history] (list-append-check {} history))
  ([opts history] (run-ellery :list-append opts history)))

(defn rw-register-check
  "Like elle.rw-register/check: checks an rw-register history with Elle's
  options (including :linearizable-keys?, :sequential-keys?, :wfr-keys?) and
  returns Elle's result map."
  ([history] (rw-register-check {} history))
  ([opts history] (run-ellery :rw-register opts history)))

(defn store-directory
  "Jepsen's place for Elle's files: (jepsen.store/path! test subdirectory
  \"elle\"), canonical, or nil when jepsen.store is not on the classpath or
  the test has no :name and :start-time (so has no store directory)."
  [test checker-opts]
  (when (and (:name test) (:start-time test))
    (when-let [path! (try (requiring-resolve 'jepsen.store/path!)
                          (catch java.io.FileNotFoundException _ nil))]
      (.getCanonicalPath ^File (path! test (:subdirectory checker-opts) "elle")))))

(defrecord ElleryChecker [model opts])

(defn check-test
  "What ElleryChecker does for jepsen.checker/check: the :directory option if
  given, else Jepsen's store directory, then ellery."
  [{:keys [model opts]} test history checker-opts]
  (let [dir (or (:directory opts) (store-directory test checker-opts))]
    (run-ellery model (cond-> opts dir (assoc :directory dir)) history)))

(defn- extend-jepsen-checker!
  "Makes ElleryChecker implement jepsen.checker/Checker, if that protocol
  can be loaded. Done when a checker is built (not when this namespace
  loads), so this namespace does not need Jepsen."
  []
  (when-let [proto-var (try (requiring-resolve 'jepsen.checker/Checker)
                            (catch java.io.FileNotFoundException _ nil))]
    (extend ElleryChecker @proto-var {:check check-test})))

(defn checker
  "A jepsen.checker/Checker that checks the test's history with ellery, like
  jepsen.tests.cycle.append/checker does with Elle. Options: Elle's (see the
  namespace doc), plus :ellery-bin and :ellery-model (:list-append by
  default, or :rw-register)."
  ([] (checker {}))
  ([opts]
   (extend-jepsen-checker!)
   (->ElleryChecker (keyword (or (:ellery-model opts) :list-append))
                     (dissoc opts :ellery-model))))

(defn list-append-checker
  "Same as (checker opts)."
  ([] (list-append-checker {}))
  ([opts] (checker (assoc opts :ellery-model :list-append))))

(defn rw-register-checker
  "Drop-in for jepsen.tests.cycle.wr/checker: checks an rw-register history."
  ([] (rw-register-checker {}))
  ([opts] (checker (assoc opts :ellery-model :rw-register))))
