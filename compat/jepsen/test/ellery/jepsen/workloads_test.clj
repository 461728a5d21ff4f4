(ns ellery.jepsen.workloads-test
  "Tests of the workload generators (ellery.jepsen.mini, .fence, .predicate)
  driven through the jepsen.generator protocol against in-memory stores
  (ellery.jepsen.sim), the histories checked by the real ellery binary.

  Run from the repository root:

    ELLERY_BIN=target/release/ellery \\
      java -cp /usr/share/java/clojure.jar:compat/jepsen/src:compat/jepsen/test \\
      clojure.main -m ellery.jepsen.workloads-test

  Exits 0 when every assertion passes, 1 otherwise. Checks the binary cannot
  make yet (predicate micro-ops before ellery reads them) print a line
  starting with PENDING and are not counted as passes."
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io]
            [clojure.set :as set]
            [clojure.test :refer [deftest is testing run-tests]]
            [ellery.jepsen :as ej]
            [ellery.jepsen.fence :as fence]
            [ellery.jepsen.mini :as mini]
            [ellery.jepsen.predicate :as pred]
            [ellery.jepsen.sim :as sim]
            [jepsen.checker :as checker]
            [jepsen.generator :as gen])
  (:import (clojure.lang ExceptionInfo)
           (java.io File)))

(defn- oks [history] (filter #(= :ok (:type %)) history))

(defn- check
  "ellery's result map for `history` (workload `model`, Elle options
  `opts`)."
  [model opts history]
  (ej/run-ellery model opts history))

;; ---------------------------------------------------------------------------
;; mini

(defn- normal-shape
  "A transaction's (or a shape template's) micro-ops as [:r i] / [:w i], i
  numbering its keys by first appearance."
  [mops]
  (let [ks (vec (distinct (map second mops)))
        idx (zipmap ks (range))]
    (mapv (fn [[f k]] [(if (= :r f) :r :w) (idx k)]) mops)))

(deftest mini-transactions-have-mtc-shapes-and-unique-values
  (doseq [wl [:list-append :rw-register]]
    (testing wl
      (let [txns (map :value (take 2000 (mini/gen {:workload wl :seed 1})))
            wf   (if (= wl :list-append) :append :w)
            writes (for [t txns, [f k v] t :when (not= :r f)] [f k v])]
        (is (every? mini/mini-txn? txns))
        (is (every? #(= wf (first %)) writes))
        (is (apply distinct? (map #(nth % 2) writes)) "values never repeat")
        (is (= (set (range 1 (inc (count writes)))) (set (map #(nth % 2) writes)))
            "one counter from 1")
        (is (= (set (map normal-shape (vals mini/shapes)))
               (set (map normal-shape txns)))
            "every shape drawn, and only those")))))

(deftest mini-options
  (testing "same seed, same sequence; another seed, another"
    (is (= (take 50 (mini/gen {:seed 5})) (take 50 (mini/gen {:seed 5}))))
    (is (not= (take 50 (mini/gen {:seed 5})) (take 50 (mini/gen {:seed 6})))))
  (testing ":read-ratio"
    (let [ro (->> (mini/gen {:seed 2 :read-ratio 0.9}) (take 4000)
                  (filter #(every? (comp #{:r} first) (:value %))) count)]
      (is (< 3400 ro 3800) (str ro " read-only of 4000"))))
  (testing ":key-dist :exponential prefers the first keys"
    (let [fs (->> (mini/gen {:seed 3 :key-dist :exponential :key-count 6})
                  (take 3000) (mapcat :value) (map second) frequencies)]
      (is (apply > (map #(fs % 0) (range 4))) (pr-str fs))))
  (testing ":max-writes-per-key retires keys, :first-key"
    (let [txns (take 3000 (mini/gen {:seed 4 :key-count 4 :first-key 100
                                     :max-writes-per-key 5}))
          per-key (frequencies (for [t txns, [f k] (:value t) :when (not= :r f)] k))]
      (is (every? #(<= % 5) (vals per-key)))
      (is (< 200 (count per-key)))
      (is (= 100 (apply min (keys per-key))))))
  (testing ":shapes"
    (is (every? #(= 1 (count (:value %)))
                (take 100 (mini/gen {:seed 1 :shapes [:r]}))))
    (is (every? #(= 2 (count (:value %)))
                (take 100 (mini/gen {:seed 1 :shapes [:r1w1 :r] :read-ratio 0})))))
  (testing "bad options are refused with the option named"
    (doseq [[o re] [[{:workload :bank} #":workload"]
                    [{:key-count 1} #":key-count"]
                    [{:key-dist :normal} #":key-dist"]
                    [{:read-ratio 2} #":read-ratio"]
                    [{:shapes [:r :w9]} #"unknown shapes"]
                    [{:shapes [:r] :read-ratio 0.5} #"read-only and writing"]
                    [{:shapes [:r1w1] :read-ratio 1} #"a read-only shape"]]]
      (is (thrown-with-msg? IllegalArgumentException re (mini/gen o))))))

(defn- mini-run [wl store]
  (sim/run {:generator (mini/gen {:workload wl :seed 3 :key-count 5})
            :store store :processes 5 :limit 1000 :seed 7}))

(deftest mini-workloads-against-stores
  (doseq [wl [:list-append :rw-register]]
    (testing (str wl " serializable store: valid, by the inference and by MTC's algorithm")
      (let [h (mini-run wl :serializable)]
        (is (= 2000 (count h)))
        (is (true? (:valid? (check wl {} h))))
        (is (true? (:valid? (check wl {:algorithm :mini} h))))))
    (testing (str wl " store with lost updates: the injected anomaly")
      (let [r (check wl {} (mini-run wl :lost-update))]
        (is (false? (:valid? r)))
        (is (some #{:lost-update} (:anomaly-types r)) (pr-str (:anomaly-types r)))))))

(deftest mini-workload-is-a-partial-test
  (let [w (mini/workload {:workload :rw-register :seed 1
                          :consistency-models [:serializable]})]
    (is (= #{:generator :checker} (set (keys w))))
    (is (= [:rw-register {:consistency-models [:serializable]}]
           ((juxt :model :opts) (:checker w))))
    (let [h (sim/run {:generator (:generator w) :store :serializable
                      :limit 300})]
      (is (true? (:valid? (checker/check (:checker w) {} h {})))))))

;; ---------------------------------------------------------------------------
;; fence

(defn- by-process [history]
  (group-by :process (filter #(= :invoke (:type %)) history)))

(deftest fences-every-n-operations-per-process
  (doseq [[opts fk] [[{:every 4} -1] [{:every 7 :fence-key -100} -100]]]
    (testing (pr-str opts)
      (let [h (sim/run {:generator (fence/wrap opts (mini/gen {:workload :rw-register
                                                               :seed 9 :key-count 6}))
                        :store :serializable :processes 4 :limit 800 :seed 2})
            n (:every opts)
            fences (filter #(fence/fence? fk %) (filter #(= :invoke (:type %)) h))]
        (is (= 1600 (count h)))
        (doseq [[p ops] (by-process h)]
          (is (= (map #(fence/fence? fk %) ops)
                 (take (count ops) (cycle (concat (repeat n false) [true]))))
              (str "process " p ": a fence after every " n " ops")))
        (is (= (map #(-> % :value second last) fences)
               (range 1 (inc (count fences))))
            "write fences install 1, 2, 3, ...")
        (is (every? #(= (:value %) (fence/write-fence fk (-> % :value second last)))
                    fences))
        (is (not-any? #(and (not (fence/fence? fk %))
                            (some (fn [[_ k]] (= k fk)) (:value %)))
                      h)
            "no other transaction touches the fence key")
        (is (true? (:valid? (check :rw-register {} h))))
        (is (true? (:valid? (check :rw-register {:algorithm :mini} h))))))))

(deftest fences-in-a-broken-store
  (let [h (sim/run {:generator (fence/wrap {:every 5}
                                           (mini/gen {:workload :rw-register
                                                      :seed 3 :key-count 5}))
                    :store :lost-update :processes 5 :limit 1000 :seed 7})
        r (check :rw-register {} h)]
    (is (false? (:valid? r)))
    (is (some #{:lost-update} (:anomaly-types r)))))

(deftest read-fences-and-pass-through
  (let [inner [{:f :txn :value [[:r 1 nil]]} {:f :kill :value nil}
               {:f :txn :value [[:r 2 nil]]} {:f :txn :value [[:r 3 nil]]}]
        h (sim/run {:generator (fence/wrap {:every 1 :kind :read} inner)
                    :store :serializable :processes 1 :limit 100})]
    (is (= [[[:r 1 nil]] nil [[:r -1 nil]] [[:r 2 nil]] [[:r -1 nil]] [[:r 3 nil]]]
           (map :value (filter #(= :invoke (:type %)) h)))
        "a non-:txn op passes uncounted; a fence delays the next op, never drops it"))
  (testing "a list-append workload is refused"
    (is (thrown-with-msg? IllegalStateException #"rw-register"
                          (gen/op (fence/wrap (mini/gen {:seed 1 :shapes [:r1w1]})) {}
                                  {:time 0 :free-processes [0]}))))
  (testing "bad options"
    (is (thrown-with-msg? IllegalArgumentException #":every"
                          (fence/wrap {:every 0} [])))
    (is (thrown-with-msg? IllegalArgumentException #":kind"
                          (fence/wrap {:kind :both} [])))))

;; ---------------------------------------------------------------------------
;; predicate

(deftest predicate-semantics
  (let [cases [[[:= 3] 3 true] [[:= 3] 4 false]
               [[:< 3] 2 true] [[:< 3] 3 false]
               [[:<= 3] 3 true] [[:<= 3] 4 false]
               [[:> 3] 4 true] [[:> 3] 3 false]
               [[:>= 3] 3 true] [[:>= 3] 2 false]
               [[:between 2 4] 2 true] [[:between 2 4] 4 true]
               [[:between 2 4] 5 false]
               [[:in #{1 5}] 5 true] [[:in #{1 5}] 2 false]
               [[:not [:= 3]] 4 true] [[:not [:= 3]] 3 false]
               [[:and [:> 1] [:< 5]] 3 true] [[:and [:> 1] [:< 5]] 5 false]
               [[:or [:< 1] [:> 5]] 6 true] [[:or [:< 1] [:> 5]] 3 false]
               [[:and] 3 true] [[:or] 3 false]
               [[:all] 3 true]
               [[:< 3] "a" false]
               ;; no row: nothing matches
               [[:all] nil false] [[:not [:= 3]] nil false]]]
    (doseq [[p v want] cases]
      (is (= want (pred/matches? p v)) (pr-str p v)))
    (is (every? pred/valid-pred? (map first cases)))
    (is (not-any? pred/valid-pred? [[:like "a%"] [:= 1 2] [:in [1]] '(:= 1)
                                    [:not [:bad]] [:between 1]]))))

(defn- malformed-micro-ops
  "The micro-ops of `h` not in the documented shapes: completed predicate
  reads must return only matching rows, sorted by key; predicate writes list
  their keys sorted."
  [h]
  (for [{:keys [type value]} h
        mop value
        :when (not ((fn [[f a b c :as mop]]
                      (case f
                        :r  (= 3 (count mop))
                        :w  (and (= 3 (count mop)) (pos-int? b))
                        :rp (and (= 3 (count mop)) (pred/valid-pred? a)
                                 (if (= :invoke type)
                                   (nil? b)
                                   (and (map? b)
                                        (every? #(pred/matches? a %) (vals b))
                                        (= (vec (keys b)) (sort (keys b))))))
                        :wp (and (= 4 (count mop)) (pred/valid-pred? a)
                                 (pos-int? b)
                                 (if (= :invoke type)
                                   (nil? c)
                                   (and (vector? c) (= c (sort c)))))
                        false))
                    mop))]
    [type mop]))

(defn- history-file-round-trips [h]
  (let [f (File/createTempFile "ellery-pred-" ".edn")]
    (try
      (ej/write-history! h f)
      (with-open [r (java.io.PushbackReader. (io/reader f))]
        (= h (vec (take-while some? (repeatedly #(edn/read {:eof nil} r))))))
      (finally (.delete f)))))

(defn- replay-differences
  "Replays the completed transactions of `h` serially, in completion order
  (the order both stores commit in), and returns the [recorded replayed]
  micro-op pairs that differ."
  [h]
  (loop [[o & more] (oks h), db {}, diffs []]
    (if-not o
      diffs
      (let [[db' replayed] (pred/apply-txn db (:value o))]
        (recur more db'
               (into diffs (remove (fn [[a b]] (= a b))
                                   (map vector (:value o) replayed))))))))

(def ^:private predicate-probe
  "The smallest history with both predicate micro-ops."
  [{:index 0, :time 0, :type :invoke, :process 0, :f :txn
    :value [[:w 1 1] [:rp [:all] nil] [:wp [:= 1] 2 nil]]}
   {:index 1, :time 1, :type :ok, :process 0, :f :txn
    :value [[:w 1 1] [:rp [:all] {1 1}] [:wp [:= 1] 2 [1]]]}])

(defn- predicates-pending
  "nil when ellery checks predicate micro-ops; else why not (its error on
  the smallest predicate history: issue 18 not merged yet)."
  []
  (try (check :rw-register {} predicate-probe) nil
       (catch ExceptionInfo e
         (str (:stderr (ex-data e))))))

(deftest predicate-workload-against-stores
  (let [good (sim/run {:generator (pred/gen {:seed 11 :predicate-ratio 0.3})
                       :store :serializable :limit 600 :seed 5})
        bad  (sim/run {:generator (pred/gen {:seed 11 :predicate-ratio 0.3})
                       :store :phantom :limit 600 :seed 5})
        mops (for [o (oks good), m (:value o)] (first m))]
    (testing "the generated history is well-formed EDN in the documented shape"
      (is (= 1200 (count good)))
      (is (= [] (malformed-micro-ops good)))
      (is (history-file-round-trips good))
      (is (set/subset? #{:r :w :rp :wp} (set mops)))
      (is (< 0.2 (/ (count (filter #{:rp :wp} mops)) (count mops)) 0.4))
      (is (some (fn [o] (some #(and (= :rp (first %)) (< 1 (count (nth % 2))))
                              (:value o)))
                (oks good))
          "some predicate reads return several rows"))
    (testing "the serializable store answers as a serial replay; the phantom store drops rows"
      (is (= [] (replay-differences good)))
      (let [d (replay-differences bad)]
        (is (seq d))
        (is (every? (fn [[got want]] (and (= :rp (first got))
                                          (< (count (nth got 2)) (count (nth want 2)))
                                          (= (nth got 2) (select-keys (nth want 2)
                                                                      (keys (nth got 2))))))
                    d)
            "only predicate reads differ, each missing rows")
        (is (= [] (malformed-micro-ops bad)))))
    (if-let [why (predicates-pending)]
      (println "PENDING (issue 18): ellery does not check :rp/:wp micro-ops yet;"
               "the checker assertions on predicate histories (serializable"
               "store valid, phantom store invalid) are not run. ellery said:"
               (.trim ^String why))
      (do
        (is (true? (:valid? (check :rw-register {} good))))
        (is (false? (:valid? (check :rw-register {} bad))))))))

(deftest predicate-options
  (is (= (take 30 (pred/gen {:seed 1})) (take 30 (pred/gen {:seed 1}))))
  (is (every? #(<= 1 (count (:value %)) 2)
              (take 200 (pred/gen {:seed 1 :max-txn-length 2}))))
  (is (every? #(every? (comp #{:rp :wp} first) (:value %))
              (take 200 (pred/gen {:seed 1 :predicate-ratio 1}))))
  (is (thrown-with-msg? IllegalArgumentException #":predicate-ratio"
                        (pred/gen {:predicate-ratio 1.5})))
  (let [w (pred/workload {:consistency-models [:serializable]})]
    (is (= [:rw-register {:consistency-models [:serializable]}]
           ((juxt :model :opts) (:checker w))))))

;; ---------------------------------------------------------------------------
;; the protocol itself

(deftest generators-speak-the-protocol
  (testing "a lazy seq of maps gets :process, :time and :type from the context"
    (let [[o g'] (gen/op (mini/gen {:seed 1}) {} {:time 5 :free-processes [3]})]
      (is (= [:invoke 3 5 :txn] ((juxt :type :process :time :f) o)))
      (is (some? g'))))
  (testing "no free process: :pending, and the wrapper stays pending"
    (is (= :pending (first (gen/op (mini/gen {:seed 1}) {} {:time 0 :free-processes []}))))
    (is (= :pending (first (gen/op (fence/wrap (mini/gen {:seed 1})) {}
                                   {:time 0 :free-processes []})))))
  (testing "an exhausted generator ends the wrapper"
    (is (nil? (gen/op (fence/wrap []) {} {:time 0 :free-processes [0]})))))

(defn -main [& _]
  (let [{:keys [fail error]} (run-tests 'ellery.jepsen.workloads-test)]
    (shutdown-agents)
    (System/exit (if (zero? (+ fail error)) 0 1))))
