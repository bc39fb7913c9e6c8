"""Diversity and near-duplicates of the examples annotators write.

- ``encoder.py``: the sentence encoder (the packaged all-MiniLM-L6-v2, mean pooling, L2-normalised).
- ``embeddings.py``: each example's embedding, stored once (``ExampleEmbedding``), computed in batches
  by an RQ job and recomputed only when the text or the encoder changes.
- ``index.py``: a nearest-neighbour index per task (usearch HNSW), rebuilt from the stored vectors and
  updated as examples arrive.
- ``rules.py``: a round's near-duplicate rule (threshold, off / warn / refuse), what the create page
  shows before submitting, and the check ``create_example`` makes.
- ``calculations.py``: the pure arithmetic (Vendi score, bootstrap interval, distinct-n, self-BLEU,
  MinHash LSH pairs, class-based TF-IDF terms), no ORM.
- ``report.py``: a round's diversity report and clusters (the job behind the console's round page).
"""
