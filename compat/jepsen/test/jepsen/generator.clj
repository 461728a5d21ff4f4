(ns jepsen.generator
  "Test stand-in for Jepsen's jepsen.generator (the io.jepsen/generator
  library): only the Generator protocol, with Jepsen's names and signatures,
  and its extension to nil, maps and seqs, which is all ellery's workload
  generators rely on. Jepsen itself is not installable here (no Clojars).

  Contract kept from Jepsen:
    (op gen test ctx)            -> nil (exhausted), [:pending gen'], or
                                    [op gen'] with op an :invoke map carrying
                                    :process and :time
    (update gen test ctx event)  -> gen', told of every invocation and
                                    completion

  The context here is a plain map {:time t, :free-processes [p ...]}; only
  this stand-in's map extension looks inside it (ellery's generators never
  do, so they run unchanged on Jepsen's own context)."
  (:refer-clojure :exclude [update]))

(defprotocol Generator
  (update [gen test context event]
    "Updates the generator to reflect an event having taken place.")
  (op [gen test context]
    "Obtains the next operation from this generator."))

(defn- fill-in-op
  "A map with :process, :time and :type filled in from the context, or
  :pending when no process is free."
  [m ctx]
  (if-let [p (first (:free-processes ctx))]
    (cond-> m
      (nil? (:process m)) (assoc :process p)
      (nil? (:time m))    (assoc :time (:time ctx))
      (nil? (:type m))    (assoc :type :invoke))
    :pending))

(extend-protocol Generator
  nil
  (update [_ _ _ _] nil)
  (op [_ _ _] nil)

  ;; A map is one operation (as in Jepsen 0.2 and later).
  clojure.lang.IPersistentMap
  (update [this _ _ _] this)
  (op [this _ ctx]
    (let [o (fill-in-op this ctx)]
      [o (when (= :pending o) this)]))

  ;; A sequence is its generators one after the other.
  clojure.lang.Seqable
  (update [this test ctx event]
    (when-let [s (seq this)]
      (cons (update (first s) test ctx event) (rest s))))
  (op [this test ctx]
    (loop [s (seq this)]
      (when s
        (if-let [[o g'] (op (first s) test ctx)]
          [o (cons g' (rest s))]
          (recur (next s)))))))
