from grader.cli.main import run

run()
