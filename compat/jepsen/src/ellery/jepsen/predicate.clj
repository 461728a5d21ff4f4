(ns ellery.jepsen.predicate
  "Predicate reads and writes for Jepsen (Vbox: phantoms), in the history
  format of ellery's rw-register workload with predicates:

    [:rp PRED RESULT]             SELECT key, value WHERE PRED
                                  RESULT: the map {key value} of the rows
                                  returned (nil in the invocation)
    [:wp PRED VALUE RESULT-KEYS]  UPDATE SET value = VALUE WHERE PRED
                                  RESULT-KEYS: the vector of keys it matched
                                  and updated, sorted (nil in the invocation)

  PRED is an EDN form over a register's value:

    [:= v] [:< v] [:<= v] [:> v] [:>= v]   comparisons
    [:between lo hi]                        lo <= value <= hi
    [:in #{v ...}]                          membership
    [:not P] [:and P ...] [:or P ...]       connectives
    [:all]                                  every row

  A key that was never written, or was deleted (value nil), is no row: no
  predicate matches it, not even [:all] or [:not P]. Keys a predicate read
  does not return were, by the database's account, rows where PRED was false
  (or absent).

  `gen` is a lazy sequence of {:f :txn, :value [...]} invocations (a Jepsen
  generator as it is) mixing item reads [:r k nil], item writes [:w k v] and
  predicate reads and writes over integer keys 0..key-count-1, each write's
  value fresh (one counter from 1, shared by :w and :wp, so a value is never
  written twice to a key). `matches?` evaluates a predicate, for a client
  that simulates one or checks a database's answer.

  Options:

    :key-count        keys in the universe (default 8)
    :max-txn-length   micro-ops per transaction, at most (default 4)
    :predicate-ratio  probability that a micro-op is a predicate one
                      (default 0.2)
    :write-ratio      probability that a micro-op writes (default 0.5)
    :seed             random seed (default: random)

  `workload` returns {:generator (gen opts), :checker ...}: ellery's
  rw-register checker."
  (:require [ellery.jepsen :as ej])
  (:import (java.util Random)))

(defn valid-pred?
  "Whether `p` is a predicate form of the documented shape."
  [p]
  (and (vector? p)
       (case (first p)
         (:= :< :<= :> :>=) (= 2 (count p))
         :between          (= 3 (count p))
         :in               (and (= 2 (count p)) (set? (second p)))
         :not              (and (= 2 (count p)) (valid-pred? (second p)))
         (:and :or)        (every? valid-pred? (rest p))
         :all              (= 1 (count p))
         false)))

(defn- cmp
  "compare, or nil when the two cannot be compared (a row's value of another
  type than the predicate's constant matches no comparison)."
  [a b]
  (try (compare a b) (catch ClassCastException _ nil)))

(defn- holds? [p v]
  (let [[op a b] p
        c #(cmp v %)]
    (case op
      :=       (= v a)
      :<       (some-> (c a) neg?)
      :<=      (some-> (c a) (<= 0))
      :>       (some-> (c a) pos?)
      :>=      (some-> (c a) (>= 0))
      :between (and (some-> (c a) (>= 0)) (some-> (c b) (<= 0)))
      :in      (contains? a v)
      :not     (not (holds? a v))
      :and     (every? #(holds? % v) (rest p))
      :or      (boolean (some #(holds? % v) (rest p)))
      :all     true)))

(defn matches?
  "Whether a row whose value is `v` matches predicate `p`. nil (no row)
  matches nothing."
  [p v]
  (boolean (and (some? v) (holds? p v))))

(defn- random-pred
  "A random predicate with constants in lo..hi, nested at most `depth`."
  [^Random rng lo hi depth]
  (let [v #(+ lo (.nextInt rng (int (max 1 (- hi lo -1)))))
        k (.nextInt rng (if (pos? depth) 10 7))]
    (case (int k)
      0 [:= (v)]
      1 [:< (v)]
      2 [:<= (v)]
      3 [:> (v)]
      4 [:>= (v)]
      5 (let [a (v) b (v)] [:between (min a b) (max a b)])
      6 (if (zero? (.nextInt rng 4))
          [:all]
          [:in (set (repeatedly (inc (.nextInt rng 3)) v))])
      7 [:not (random-pred rng lo hi (dec depth))]
      8 [:and (random-pred rng lo hi (dec depth)) (random-pred rng lo hi (dec depth))]
      9 [:or (random-pred rng lo hi (dec depth)) (random-pred rng lo hi (dec depth))])))

(defn- check-opts! [{:keys [key-count max-txn-length predicate-ratio
                            write-ratio]
                     :or {key-count 8, max-txn-length 4, predicate-ratio 0.2
                          write-ratio 0.5}}]
  (let [bad (fn [msg] (throw (IllegalArgumentException.
                               (str "ellery.jepsen.predicate: " msg))))]
    (when-not (pos-int? key-count)
      (bad (str ":key-count must be a positive integer, not "
                (pr-str key-count))))
    (when-not (pos-int? max-txn-length)
      (bad (str ":max-txn-length must be a positive integer, not "
                (pr-str max-txn-length))))
    (doseq [[k r] [[:predicate-ratio predicate-ratio]
                   [:write-ratio write-ratio]]]
      (when-not (and (number? r) (<= 0 r 1))
        (bad (str k " must be a number in [0, 1], not " (pr-str r)))))))

(defn gen
  "A lazy, infinite sequence of transactions with item and predicate micro-ops
  (see the namespace doc)."
  ([] (gen {}))
  ([opts]
   (check-opts! opts)
   (let [rng (Random. (long (or (:seed opts) (.nextLong (Random.)))))
         n   (:key-count opts 8)
         len (:max-txn-length opts 4)
         pr  (:predicate-ratio opts 0.2)
         wr  (:write-ratio opts 0.5)]
     ((fn txns [value]
        (lazy-seq
          (let [[mops value]
                (loop [i (inc (.nextInt rng (int len))), mops [], value value]
                  (if (zero? i)
                    [mops value]
                    (let [pred? (< (.nextDouble rng) pr)
                          write? (< (.nextDouble rng) wr)
                          k (.nextInt rng (int n))
                          ;; Constants near the latest values, which are
                          ;; what the rows hold (values only grow).
                          window (* 4 n len)
                          p #(random-pred rng (max 1 (- value window)) value 1)]
                      (cond
                        (and pred? write?)
                        (recur (dec i)
                               (conj mops [:wp (p) value nil])
                               (inc value))
                        pred?  (recur (dec i)
                                      (conj mops [:rp (p) nil])
                                      value)
                        write? (recur (dec i) (conj mops [:w k value])
                                      (inc value))
                        :else  (recur (dec i) (conj mops [:r k nil]) value)))))]
            (cons {:f :txn, :value mops} (txns value)))))
      1))))

(defn apply-txn
  "Runs transaction value `mops` on `db` (a map key -> value) serially:
  returns [db' completed-mops], reads and predicate results filled in, as a
  database would. For stand-in stores and clients that simulate one."
  [db mops]
  (reduce
    (fn [[db done] [f a b :as mop]]
      (case f
        :r  [db (conj done [:r a (get db a)])]
        :w  [(assoc db a b) (conj done mop)]
        :rp [db (conj done [:rp a (into (sorted-map)
                                        (filter #(matches? a (val %)) db))])]
        :wp (let [ks (vec (sort (keep #(when (matches? a (val %)) (key %)) db)))]
              [(reduce #(assoc %1 %2 b) db ks) (conj done [:wp a b ks])])))
    [db []]
    mops))

(defn workload
  "A partial Jepsen test: {:generator (gen opts), :checker (ellery's
  rw-register checker with the Elle options in opts)}."
  ([] (workload {}))
  ([opts]
   {:generator (gen opts)
    :checker   (ej/rw-register-checker
                 (select-keys opts [:consistency-models :anomalies :algorithm
                                    :cycle-search-timeout :directory
                                    :plot-format :plot-timeout
                                    :max-plot-bytes :ellery-bin]))}))
