(ns ellery.jepsen.sim
  "A stand-in for a Jepsen run: drives a generator through the
  jepsen.generator protocol (op, then update with every invocation and
  completion) against an in-memory store, with several concurrent processes
  interleaved by a seeded scheduler, and returns the history.

  Stores (keyword -> behaviour):

    :serializable  each transaction runs atomically when it completes, so
                   the history is strictly serializable
    :lost-update   reads come from a snapshot taken at invocation, writes are
                   applied at completion with no conflict check: concurrent
                   read-modify-writes of a key overwrite each other (lists
                   keep both appends, but each reader missed the other's)
    :phantom       serializable, except that a predicate read leaves out one
                   matching row whose current version was installed before
                   the read began (a phantom no serial order explains within
                   real time)"
  (:require [ellery.jepsen.predicate :as pred]
            [jepsen.generator :as gen])
  (:import (java.util Random)))

(defn- run-mops
  "Runs micro-ops `mops` on `db` in order: [db' completed-mops]. Reads see
  the transaction's own earlier writes. `skip-row` (a key or nil) is left
  out of predicate read results (the phantom fault)."
  [db mops skip-row]
  (reduce
    (fn [[db done] [f k v :as mop]]
      (case f
        :r      [db (conj done [:r k (get db k)])]
        :w      [(assoc db k v) (conj done mop)]
        :append [(update db k (fnil conj []) v) (conj done mop)]
        :rp     (let [[_ rows] (pred/apply-txn db [mop])]
                  [db (conj done (update (first rows) 2 dissoc skip-row))])
        :wp     (let [[db' rows] (pred/apply-txn db [mop])]
                  [db' (conj done (first rows))])))
    [db []]
    mops))

(defn- writes-of
  "The writes of completed micro-ops, as [f k v] for :w and :append, and
  [:w k v] for each key a predicate write updated."
  [done]
  (mapcat (fn [[f a b c]]
            (case f
              (:w :append) [[f a b]]
              :wp          (for [k c] [:w k b])
              []))
          done))

(defn- apply-writes [db writes]
  (reduce (fn [db [f k v]]
            (if (= :append f) (update db k (fnil conj []) v) (assoc db k v)))
          db writes))

(defn- phantom-row
  "A key the phantom store leaves out of a predicate read: the first key,
  in order, of a row matching one of the transaction's predicate reads whose
  version was installed (at time `installed`) before the read began at
  `start`."
  [db installed mops start]
  (first (for [[f p] mops :when (= :rp f)
               [k v] (sort db)
               :when (and (pred/matches? p v) (< (installed k start) start))]
           k)))

(defn- commit
  "Completes transaction `op` (invoked at time `start`) on store state
  {:db, :installed}: [state' completed-value]."
  [store {:keys [db installed] :as state} op start snapshot now]
  (case store
    :serializable
    (let [[db' done] (run-mops db (:value op) nil)]
      [(assoc state :db db'
              :installed (into installed (for [[_ k] (writes-of done)] [k now])))
       done])

    :lost-update
    (let [[_ done] (run-mops snapshot (:value op) nil)]
      [(assoc state :db (apply-writes db (writes-of done))) done])

    :phantom
    (let [skip (phantom-row db installed (:value op) start)
          [db' done] (run-mops db (:value op) skip)]
      [(assoc state :db db'
              :installed (into installed (for [[_ k] (writes-of done)] [k now])))
       done])))

(defn run
  "Runs generator `generator` with `processes` processes against `store`
  until it has invoked `limit` operations (or is exhausted) and every
  invocation has completed. Returns the history: invocations and :ok
  completions with :index, :time (nanoseconds, one step apart), :process,
  :f and :value."
  [{:keys [generator store processes limit seed]
    :or {processes 5, limit 500, seed 0}}]
  (let [rng (Random. (long seed))]
    (loop [g generator, state {:db {}, :installed {}}, in-flight {}
           history [], invoked 0, exhausted? false, t 0]
      (let [free (remove (set (keys in-flight)) (range processes))
            try-invoke? (and (not exhausted?) (< invoked limit) (seq free)
                             (or (empty? in-flight) (< (.nextDouble rng) 0.5)))
            ;; A random free process first: the one a map op goes to.
            free (when (seq free)
                   (let [v (vec free) i (.nextInt rng (count v))]
                     (cons (v i) (concat (subvec v 0 i) (subvec v (inc i))))))
            ctx {:time t, :free-processes free}
            res (when try-invoke? (gen/op g {} ctx))]
        (cond
          (and try-invoke? (nil? res))
          (recur g state in-flight history invoked true t)

          (and res (not= :pending (first res)))
          (let [[o g'] res
                o (assoc o :index (count history) :time t)
                p (:process o)]
            (recur (gen/update g' {} ctx o) state
                   (assoc in-flight p {:op o, :start t, :snapshot (:db state)})
                   (conj history o) (inc invoked) exhausted? (+ t 1000)))

          (seq in-flight)
          (let [ps (vec (sort (keys in-flight)))
                p  (ps (.nextInt rng (count ps)))
                {:keys [op start snapshot]} (in-flight p)
                [state' value] (commit store state op start snapshot t)
                done {:index (count history), :time t, :type :ok,
                      :process p, :f (:f op), :value value}
                g' (gen/update (if res (second res) g) {}
                               {:time t, :free-processes (cons p free)} done)]
            (recur g' state' (dissoc in-flight p) (conj history done)
                   invoked exhausted? (+ t 1000)))

          :else history)))))
