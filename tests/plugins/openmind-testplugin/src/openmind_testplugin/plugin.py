from openmind.core.hookspecs import hookimpl
from openmind.core.specs import DatasetSpec, ModelGroupSpec, TaskSpec, TemplateSpec


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
