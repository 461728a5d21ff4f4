(ns ellery.jepsen.fence
  "Fence transactions (Cobra, Tan et al., OSDI 2020) for online checking with
  `ellery watch`: a generator wrapper after which every process issues a
  fence every N of its own operations, so the checker can tell which
  transactions are settled and forget them.

    (ellery.jepsen.fence/wrap {:every 20} generator)

  A fence follows the fence convention shared with `ellery watch` and
  `ellery gen --fences`:

    write fence  {:f :txn, :value [[:r FK nil] [:w FK v]]}
    read fence   {:f :txn, :value [[:r FK nil]]}

  FK is the fence key (option :fence-key, default -1, an integer like
  Jepsen's usual keys: ellery rejects histories whose keys mix types), and v
  counts up from 1, so no fence value is written twice. Fences are ordinary
  rw-register transactions: the client runs them like any other :txn, and
  the rest of the workload must never touch FK. They belong in rw-register
  workloads (ellery.jepsen.mini with :workload :rw-register, or
  jepsen.tests.cycle.wr).

  Options:

    :every      N, fence after every N operations of a process (default 20,
                Cobra's setting; under strong-session-serializable a fence
                every 10 lets `ellery watch` forget more each round, with no
                collection stall on the streams measured, for twice the
                fences: see ellery's README, How often to fence)
    :fence-key  the fence key (default -1)
    :kind       :write (default, Cobra's Wfence) or :read (Rfence)

  Wrapping a list-append workload is an error (ellery rejects histories that
  mix :append and :w), raised when the first appending operation passes.

  Counting: a process's operations of the wrapped generator that are :txn
  invocations; when it has issued N since its last fence (or the start), the
  next operation handed to it is a fence instead, and the wrapped generator's
  operation is left for later (generators are values, so nothing is lost).
  Operations that are not :txn (a nemesis's) pass through uncounted. A
  crashed process comes back under a new process number and starts counting
  from 0. Completions of fences are not passed to the wrapped generator,
  which never asked for them."
  (:refer-clojure :exclude [update])
  (:require [jepsen.generator :as gen]))

(defn write-fence
  "The value of a write fence installing `v` on fence key `fk`."
  [fk v]
  [[:r fk nil] [:w fk v]])

(defn read-fence
  "The value of a read fence of fence key `fk`."
  [fk]
  [[:r fk nil]])

(defn fence?
  "Whether op `op` is a fence transaction on key `fk` (invocation or
  completion): a :txn whose micro-ops all touch `fk`."
  [fk op]
  (and (= :txn (:f op))
       (sequential? (:value op))
       (seq (:value op))
       (every? #(and (sequential? %) (= fk (second %))) (:value op))))

(defrecord FenceGen [gen every fence-key kind counts next-value]
  gen/Generator
  (op [this test ctx]
    (when-let [[o gen'] (gen/op gen test ctx)]
      (if (= :pending o)
        [:pending (assoc this :gen gen')]
        (let [p (:process o)]
          (cond
            (not= :txn (:f o))
            [o (assoc this :gen gen')]

            (<= every (get counts p 0))
            ;; The wrapped generator's op stays with it (gen, not gen').
            (let [value (if (= :read kind)
                          (read-fence fence-key)
                          (write-fence fence-key next-value))]
              [(assoc o :value value)
               (assoc this
                      :counts (assoc counts p 0)
                      :next-value (cond-> next-value
                                    (not= :read kind) inc))])

            (some #(= :append (first %)) (:value o))
            (throw (IllegalStateException.
                     (str "ellery.jepsen.fence: fences are rw-register "
                          "transactions, but the wrapped generator appends ("
                          (pr-str (:value o)) "); wrap an rw-register "
                          "workload")))

            :else
            [o (assoc this :gen gen'
                      :counts (assoc counts p (inc (get counts p 0))))])))))

  (update [this test ctx event]
    (if (fence? fence-key event)
      this
      (assoc this :gen (gen/update gen test ctx event)))))

(defn wrap
  "Wraps generator `g` so that each process issues a fence transaction every
  (:every opts) of its operations. See the namespace doc."
  ([g] (wrap {} g))
  ([opts g]
   (let [every (:every opts 20)
         kind  (:kind opts :write)]
     (when-not (pos-int? every)
       (throw (IllegalArgumentException.
                (str "ellery.jepsen.fence: :every must be a positive "
                     "integer, not " (pr-str every)))))
     (when-not (#{:write :read} kind)
       (throw (IllegalArgumentException.
                (str "ellery.jepsen.fence: :kind must be :write or :read, "
                     "not " (pr-str kind)))))
     (map->FenceGen {:gen g, :every every, :fence-key (:fence-key opts -1)
                     :kind kind, :counts {}, :next-value 1}))))
