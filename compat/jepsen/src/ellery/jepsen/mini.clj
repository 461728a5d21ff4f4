(ns ellery.jepsen.mini
  "Mini-transaction workloads for Jepsen (the MTC paper, Wei et al., ICDE
  2025): every transaction reads one or two keys and writes only keys it has
  read first (read-modify-write), each write with a value never written
  before. With both rules the dependency graph is almost fixed by the history,
  so ellery checks it in linear time (--algorithm mini), and small
  transactions abort less and still find the bugs long ones do.

  Drop-in for jepsen.tests.cycle.append/test (and jepsen.tests.cycle.wr/test):

    (merge test (ellery.jepsen.mini/workload {:workload :list-append}))

  gives a :generator of {:f :txn, :value [...]} invocations and an ellery
  :checker. The generator is a lazy sequence of op maps, which Jepsen's
  generator protocol takes as it is (as with Elle's own list-append/gen); wrap
  it in gen/limit, gen/stagger, gen/time-limit, ellery.jepsen.fence/wrap as
  usual. The client must run each :txn as one transaction and fill in reads
  (:r k nil -> :r k value).

  Options (all optional):

    :workload          :list-append (default) or :rw-register
    :key-count         keys in use at a time (default 10, at least 2)
    :max-writes-per-key  retire a key after this many writes and use a fresh
                       one (default nil: never; list-append lists then grow
                       without bound)
    :key-dist          :uniform (default), :exponential (key i of the active
                       keys with weight base^-i) or :zipf (weight 1/(i+1)^s)
    :key-dist-base     base of :exponential (default 2)
    :zipf-s            exponent of :zipf (default 1.0)
    :read-ratio        probability that a transaction is read-only (default
                       nil: every shape equally likely)
    :shapes            the shapes to draw from (default all of `shapes`)
    :seed              random seed (default: a random one); the same seed
                       gives the same sequence
    :first-key         the first key (default 0); keys are integers counting
                       up from it

  plus, for `workload`, the checker options of ellery.jepsen/checker
  (:consistency-models, :anomalies, :algorithm, :ellery-bin, ...).

  Values: one counter for the whole sequence, starting at 1, so a value is
  never written twice to any key (MTC's unique-value assumption)."
  (:require [ellery.jepsen :as ej])
  (:import (java.util Random)))

(def shapes
  "The mini-transaction shapes of MTC's Jepsen generator, as micro-op
  templates: [f i] reads (:r) or writes (:w) the transaction's i-th key.
  Named as in the paper's artifact (r1w1: read key 1, write key 1)."
  {:r        [[:r 0]]
   :r1r2     [[:r 0] [:r 1]]
   :r1w1     [[:r 0] [:w 0]]
   :r1r2w2   [[:r 0] [:r 1] [:w 1]]
   :r2r1w2   [[:r 1] [:r 0] [:w 1]]
   :r1r1w1   [[:r 0] [:r 0] [:w 0]]
   :r2w2r1   [[:r 1] [:w 1] [:r 0]]
   :r2w2r2   [[:r 1] [:w 1] [:r 1]]
   :r1r2w1w2 [[:r 0] [:r 1] [:w 0] [:w 1]]
   :r1r2w2w1 [[:r 0] [:r 1] [:w 1] [:w 0]]
   :r1w1r2w2 [[:r 0] [:w 0] [:r 1] [:w 1]]})

(defn mini-txn?
  "Whether micro-ops `mops` form a mini-transaction (MTC Definition 8): one or
  two reads, at most two writes (:w or :append), each write of a key preceded
  by a read of that key in the same transaction."
  [mops]
  (let [reads  (filter #(= :r (first %)) mops)
        writes (remove #(= :r (first %)) mops)]
    (and (<= 1 (count reads) 2)
         (<= (count writes) 2)
         (every? #{:r :w :append} (map first mops))
         (loop [[[f k] & more] mops, read #{}]
           (cond (nil? f)  true
                 (= :r f)  (recur more (conj read k))
                 (read k)  (recur more read)
                 :else     false)))))

(defn- read-only? [shape] (every? #(= :r (first %)) (shapes shape)))

(defn- key-count-of [shape] (inc (apply max (map second (shapes shape)))))

(defn- check-opts!
  [{:keys [workload key-count key-dist read-ratio max-writes-per-key]
    :or {workload :list-append, key-count 10, key-dist :uniform}
    :as opts}]
  (let [bad (fn [msg] (throw (IllegalArgumentException.
                               (str "ellery.jepsen.mini: " msg))))]
    (when-not (#{:list-append :rw-register} workload)
      (bad (str ":workload must be :list-append or :rw-register, not "
                (pr-str workload))))
    (when-not (and (integer? key-count) (<= 2 key-count))
      (bad (str ":key-count must be an integer >= 2, not " (pr-str key-count))))
    (when-not (#{:uniform :exponential :zipf} key-dist)
      (bad (str ":key-dist must be :uniform, :exponential or :zipf, not "
                (pr-str key-dist))))
    (when (and read-ratio (not (and (number? read-ratio)
                                    (<= 0 read-ratio 1))))
      (bad (str ":read-ratio must be a number in [0, 1], not "
                (pr-str read-ratio))))
    (when (and max-writes-per-key (not (pos-int? max-writes-per-key)))
      (bad (str ":max-writes-per-key must be a positive integer, not "
                (pr-str max-writes-per-key))))
    (when-let [unknown (seq (remove shapes (:shapes opts)))]
      (bad (str "unknown shapes " (pr-str unknown) "; known: "
                (pr-str (sort (keys shapes))))))
    (when (and (:shapes opts) (empty? (:shapes opts)))
      (bad ":shapes is empty"))
    (when-let [rr (when (number? read-ratio) read-ratio)]
      (let [ss (or (seq (:shapes opts)) (keys shapes))]
        (when (or (and (pos? rr) (not-any? read-only? ss))
                  (and (< rr 1) (every? read-only? ss)))
          (bad (str ":read-ratio " rr " needs "
                    (cond (zero? rr) "a writing shape"
                          (= 1 rr) "a read-only shape"
                          :else "both read-only and writing shapes")
                    " in :shapes")))))))

(defn- weights
  "Cumulative weights of the active key positions 0..n-1."
  [{:keys [key-dist key-dist-base zipf-s] :or {key-dist :uniform
                                              key-dist-base 2
                                              zipf-s 1.0}}
   n]
  (let [w (case key-dist
            :uniform     (repeat n 1.0)
            :exponential (map #(Math/pow key-dist-base (- %)) (range n))
            :zipf        (map #(/ 1.0 (Math/pow (inc %) zipf-s)) (range n)))]
    (double-array (reductions + w))))

(defn- pick-index
  "A position drawn from cumulative weights `cum`."
  ^long [^Random rng ^doubles cum]
  (let [x (* (.nextDouble rng) (aget cum (dec (alength cum))))]
    (loop [i 0]
      (if (or (< x (aget cum i)) (= i (dec (alength cum))))
        i
        (recur (inc i))))))

(defn- pick-shape [^Random rng opts]
  (let [ss (vec (sort (or (seq (:shapes opts)) (keys shapes))))
        rr (:read-ratio opts)
        pool (if (nil? rr)
               ss
               (let [ro? (< (.nextDouble rng) rr)]
                 (filterv #(= ro? (read-only? %)) ss)))]
    (nth pool (.nextInt rng (count pool)))))

(defn- pick-keys
  "`n` distinct keys (positions drawn by weight) from the active keys."
  [^Random rng cum active n]
  (loop [picked []]
    (if (= n (count picked))
      picked
      (let [k (nth active (pick-index rng cum))]
        (recur (if (some #{k} picked) picked (conj picked k)))))))

(defn- step
  "One transaction from state {:active [k ...], :next-key k, :writes {k n},
  :value v}: [txn-map state']."
  [^Random rng opts cum {:keys [active next-key writes value] :as state}]
  (let [shape (pick-shape rng opts)
        ks    (pick-keys rng cum active (key-count-of shape))
        wf    (if (= :rw-register (:workload opts :list-append)) :w :append)
        [mops value]
        (reduce (fn [[mops v] [f i]]
                  (if (= :r f)
                    [(conj mops [:r (ks i) nil]) v]
                    [(conj mops [wf (ks i) v]) (inc v)]))
                [[] value]
                (shapes shape))
        written (for [[f k] mops :when (not= :r f)] k)
        writes  (reduce #(update %1 %2 (fnil inc 0)) writes written)
        limit   (:max-writes-per-key opts)
        retired (if limit (filter #(<= limit (writes % 0)) (distinct written)) [])
        ;; Each retired key's slot goes to a fresh key, so the distribution
        ;; over positions stays as configured.
        [active next-key]
        (reduce (fn [[active nk] k]
                  [(mapv #(if (= % k) nk %) active) (inc nk)])
                [active next-key]
                retired)]
    [{:f :txn, :value mops}
     (assoc state :active active, :next-key next-key
                  :writes (apply dissoc writes retired), :value value)]))

(defn gen
  "A lazy, infinite sequence of mini-transaction invocations {:f :txn,
  :value [...]} (a Jepsen generator as it is). See the namespace doc for
  `opts`."
  ([] (gen {}))
  ([opts]
   (check-opts! opts)
   (let [rng   (Random. (long (or (:seed opts) (.nextLong (Random.)))))
         n     (:key-count opts 10)
         k0    (:first-key opts 0)
         cum   (weights opts n)]
     ((fn txns [state]
        (lazy-seq
          (let [[txn state'] (step rng opts cum state)]
            (cons txn (txns state')))))
      {:active (vec (range k0 (+ k0 n)))
       :next-key (+ k0 n)
       :writes {}
       :value 1}))))

(defn checker
  "ellery's checker for the workload: ellery.jepsen/checker with
  :ellery-model from :workload."
  [opts]
  (ej/checker (-> opts
                  (select-keys [:consistency-models :anomalies :algorithm
                                :cycle-search-timeout :directory :plot-format
                                :plot-timeout :max-plot-bytes :ellery-bin
                                :linearizable-keys? :sequential-keys?
                                :wfr-keys?])
                  (assoc :ellery-model (:workload opts :list-append)))))

(defn workload
  "A partial Jepsen test, as jepsen.tests.cycle.append/test returns:
  {:generator (gen opts), :checker (checker opts)}. Mini-transactions need
  no final reads: every write is read-modify-write, so the versions a later
  read must see are fixed already."
  ([] (workload {}))
  ([opts]
   {:generator (gen opts)
    :checker   (checker opts)}))
