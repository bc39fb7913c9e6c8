"""The codes of the ``RuleError``s raised while preparing or running a training."""


class TrainingErrorCode:
    ENCODER_CHECKSUM = "encoder_checksum"
    ENCODER_MISSING = "encoder_missing"
    NO_EXAMPLES = "no_training_examples"
    BAD_NAME = "bad_model_name"
    NAME_TAKEN = "model_name_taken"
    NO_SEED_DATA = "no_seed_data"
