"""Data in and out, Qt-free, shared by the command line and the app.

- :mod:`.tables`: read a CSV/TSV as written (:func:`~.tables.read_table`), pick label,
  feature and id columns and parse the features (:func:`~.tables.labelled_data`).
- :mod:`.preprocessing`: missing values (error, drop, impute with training medians) and
  standardisation by the training rows, as plain data
  (:class:`~.preprocessing.Preprocessing`, :func:`~.preprocessing.prepare_training`,
  :func:`~.preprocessing.prepare_rows`).
- :mod:`.numbers`: numbers as pandas and R read them (ASCII decimal notation only).
- :mod:`.modelfile`: model files that cannot run code (:func:`~.modelfile.save_model`,
  :func:`~.modelfile.load_model`, :class:`~.modelfile.FittedModel`), encoded by
  :mod:`.serialize` (trusted types only), every object checked by its type's schema
  (:mod:`.schema`) before it is built, reading bounded by the manifest's declarations.
- :mod:`.results`: the probabilities CSV and its JSON sidecar
  (:func:`~.results.write_results`, :func:`~.results.read_results`).
- :mod:`.atomic`: checked output paths, atomic writes, and files written together
  (:func:`~.atomic.write_together`: all replaced or none, as far as signals go).
"""
