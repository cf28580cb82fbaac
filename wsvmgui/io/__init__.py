"""Data in and out, Qt-free, shared by the command line and the app.

- :mod:`.tables`: read a CSV/TSV as written (:func:`~.tables.read_table`), pick label,
  feature and id columns and parse the features (:func:`~.tables.labelled_data`).
- :mod:`.preprocessing`: missing values (error, drop, impute with training medians) and
  standardisation by the training rows, as plain data
  (:class:`~.preprocessing.Preprocessing`, :func:`~.preprocessing.prepare_training`,
  :func:`~.preprocessing.prepare_rows`).
- :mod:`.modelfile`: model files that cannot run code (:func:`~.modelfile.save_model`,
  :func:`~.modelfile.load_model`, :class:`~.modelfile.FittedModel`), encoded by
  :mod:`.serialize` (trusted types only).
- :mod:`.results`: the probabilities CSV and its JSON sidecar
  (:func:`~.results.write_results`, :func:`~.results.read_results`).
- :mod:`.atomic`: checked output paths and atomic writes.
"""
