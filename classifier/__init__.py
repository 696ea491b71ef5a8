"""Intent classifier for offload-router: features, training, the serving model and its data.

Serving needs only ``IntentModel.load()`` and ``predict()`` (orjson + numpy, no scikit-learn). Training
(``classifier.train``) and leave-one-source-out evaluation need scikit-learn (extra ``train``).
"""

from classifier.model import INTENTS, IntentModel, Prediction

__all__ = ["INTENTS", "IntentModel", "Prediction"]
