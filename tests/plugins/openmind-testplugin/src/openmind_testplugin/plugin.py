from openmind.core.hookspecs import hookimpl
from openmind.core.specs import (
    ArgumentGroupSpec,
    DatasetFormatSpec,
    DatasetSpec,
    ModelGroupSpec,
    PipelineSpec,
    PipelineWrapperSpec,
    RouteSpec,
    TaskSpec,
    TemplateSpec,
    TrainerSpec,
    TrainerWrapperSpec,
)


@hookimpl
def openmind_register_tasks(register):
    register(TaskSpec(name="poem", description="Write a poem about a topic."))
    register(TaskSpec(name="poem-sft", kind_of="training", description="Fine-tune a poet."))


@hookimpl
def openmind_register_model_groups(register):
    register(
        ModelGroupSpec(
            name="tinypoet",
            tasks=("poem",),
            template="poet",
            architectures=("TinyPoetForCausalLM",),
            lora_targets=("q_proj", "v_proj"),
        )
    )


@hookimpl
def openmind_register_templates(register):
    register(TemplateSpec(name="poet", impl="openmind_testplugin.template:PoetTemplate", stop_words=("<end>",)))


@hookimpl
def openmind_register_datasets(register):
    register(DatasetSpec(name="poems", task="poem-sft", columns=("topic", "poem")))


@hookimpl
def openmind_register_pipeline_wrappers(register):
    register(PipelineWrapperSpec(task="poem", impl="openmind_testplugin.poem:PoemPipeline"))


@hookimpl
def openmind_register_pipelines(register):
    register(
        PipelineSpec(
            task="poem",
            framework="pt",
            backend="testplugin",
            impl="openmind_testplugin.poem:TorchPoem",
            requires=("torch>=2.1", "transformers>=4.45"),
            description="poem on transformers (greedy)",
        )
    )


@hookimpl
def openmind_register_argument_groups(register):
    register(ArgumentGroupSpec(name="poem", impl="openmind_testplugin.args:PoemArguments", verbs=("run", "deploy")))


@hookimpl
def openmind_register_routes(register):
    register(
        RouteSpec(
            path="/v1/poems",
            methods=("POST",),
            impl="openmind_testplugin.routes:handler",
            requires=("fastapi>=0.110",),
            description="a poem about a topic from the served model",
        )
    )


@hookimpl
def openmind_register_dataset_formats(register):
    register(
        DatasetFormatSpec(
            name="poems",
            produces="openai",
            columns=("topic", "poem"),
            impl="openmind_testplugin.training:poem_to_messages",
            description="topic + poem rows, converted to a user/assistant conversation.",
        )
    )


@hookimpl
def openmind_register_trainer_wrappers(register):
    register(TrainerWrapperSpec(task="poem-sft", impl="openmind_testplugin.training:PoemSFTWrapper"))


@hookimpl
def openmind_register_trainers(register):
    register(
        TrainerSpec(
            task="poem-sft",
            framework="pt",
            impl="openmind.pt.training.trainers:SFTTrainer",
            requires=("torch>=2.1", "transformers>=4.45", "openmind-pt"),
            finetuning_types=("full", "lora"),
            description="openmind-pt's SFT trainer on poems rows.",
        )
    )
