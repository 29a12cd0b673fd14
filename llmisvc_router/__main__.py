from llmisvc_router.cli import run

run()
