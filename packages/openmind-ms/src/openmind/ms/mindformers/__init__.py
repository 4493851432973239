"""The mindformers backend: MindSpore's production stack for Ascend (config and checkpoint
translation from Hugging Face folders, launch through ``msrun``). Import-guarded: nothing here
imports mindformers until a pipeline or trainer of this backend is used, and then only on Ascend."""
