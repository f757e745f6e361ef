# SEED RL suite. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SEED := $(VENV)/bin/seed
STAMP := $(VENV)/.installed

BENCHMARKS := $(sort $(basename $(notdir $(wildcard experiments/*.yaml))))
RUN_ID ?= $(shell date +%Y%m%d-%H%M%S)
# Budget overrides: make atari_pong_vtrace FRAMES=2000000 ACTORS=4
FRAMES ?=
SECONDS ?=
ACTORS ?=
ENVS ?=
MODE ?= train
COMPARE_SECONDS ?= 60
RUN_FLAGS = $(if $(FRAMES),--frames $(FRAMES)) $(if $(SECONDS),--seconds $(SECONDS)) \
            $(if $(ACTORS),--actors $(ACTORS)) $(if $(ENVS),--envs-per-actor $(ENVS))
PYTEST_ARGS ?=

.PHONY: help setup football-setup dmlab-setup test test-all demo plots report clean distclean dmlab \
        $(BENCHMARKS) $(addsuffix -impala,$(BENCHMARKS)) $(addprefix compare-,$(BENCHMARKS)) \
        $(addprefix roofline-,$(BENCHMARKS)) $(addprefix sweep-,$(BENCHMARKS)) \
        $(addprefix profile-,$(BENCHMARKS))

help:  ## list the targets
	@echo "make demo                 set up .venv, run a short SEED-vs-IMPALA comparison on Atari Pong, plot it"
	@echo "make test                 set up (Football and DeepMind Lab engines included) and run the test suite"
	@echo "make test-all             the test suite including slow tests"
	@echo "make setup                create $(VENV) and install the suite (+ dev, ray, notebooks extras)"
	@echo "make football-setup       build and install gfootball into $(VENV) (apt packages too)"
	@echo "make dmlab-setup          build DeepMind Lab from source with Bazel, offline, into $(VENV) (DMLAB_SOURCE=...)"
	@echo "make <benchmark>          train a benchmark under SEED          (results/<benchmark>/seed/<run_id>)"
	@echo "make <benchmark>-impala   train it under the IMPALA baseline    (results/<benchmark>/impala/<run_id>)"
	@echo "make compare-<benchmark>  SEED, IMPALA, SEED again for COMPARE_SECONDS each; prints the FPS ratio"
	@echo "make roofline-<benchmark> what this machine can reach: simulation, inference, training alone"
	@echo "make sweep-<benchmark>    compare over small/medium/large networks (SWEEP=...), sweep.csv + sweep.png"
	@echo "make profile-<benchmark>  py-spy flame graph of the SEED learner in serve mode (SECONDS=60)"
	@echo "make plots                execute notebooks/ on results/, PNGs to results/plots/"
	@echo "make report               results/REPORT.md and its figures from the committed runs; strips played from changed checkpoints"
	@echo "make dmlab                build DeepMind Lab if needed, then train dmlab_seekavoid_arena_01"
	@echo "make clean / distclean    remove caches and generated code / also the virtualenv"
	@echo
	@echo "benchmarks: $(BENCHMARKS)"
	@echo "overrides:  FRAMES=  SECONDS=  ACTORS=  ENVS=  MODE=train|serve  COMPARE_SECONDS=60"
	@echo "            TIMELINE=1 (compare: where SEED's lock-step cycles go, seed timeline)"
	@echo "            IDLE_POLL=1 (compare, roofline: idle cores poll, cpu_idle_poll; root)"
	@echo "            DTYPE=float32|bfloat16|bfloat16_train (compare, roofline: compute_dtype)"

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev,ray,notebooks]'
	$(PY) -c "import seed.transport.proto"  # compile the .proto once
	touch $(STAMP)

football-setup: setup
	bash scripts/install_football.sh $(VENV)

# DeepMind Lab's source: upstream at the commit third_party/dmlab/ is written for, or the copy
# vendored beside this checkout when there is one (this project's machines reach no git host).
# Any archive, directory or git URL@commit of that commit works: make dmlab-setup DMLAB_SOURCE=...
DMLAB_VENDORED := $(abspath ../shared/vendor/deepmind-lab-b1db91af.tar.xz)
DMLAB_SOURCE ?= $(if $(wildcard $(DMLAB_VENDORED)),$(DMLAB_VENDORED),https://github.com/google-deepmind/lab.git@b1db91af5b4d2f3a24466f4632a3e5e1b0829cca)
dmlab-setup: setup
	DMLAB_SOURCE="$(DMLAB_SOURCE)" bash scripts/install_dmlab.sh $(VENV)

# SEED_REQUIRE_DMLAB: the real-engine DMLab tests fail, instead of skipping, without the engine.
test: setup football-setup dmlab-setup
	SEED_REQUIRE_DMLAB=1 $(VENV)/bin/pytest -m "not slow" $(PYTEST_ARGS)

test-all: setup football-setup dmlab-setup
	SEED_REQUIRE_DMLAB=1 $(VENV)/bin/pytest $(PYTEST_ARGS)

demo: setup
	$(SEED) compare --config experiments/atari_pong_vtrace.yaml --seconds $(or $(SECONDS),45) \
	    --mode train --logdir results/demo/$(RUN_ID)
	@$(PY) -m seed.plots.compare results/demo/$(RUN_ID) >/dev/null
	@echo "table: results/demo/$(RUN_ID)/compare.csv   plot: results/demo/$(RUN_ID)/compare.png"

$(BENCHMARKS): %: setup
	$(SEED) train --config experiments/$@.yaml --arch seed --logdir results/$@/seed/$(RUN_ID) $(RUN_FLAGS)

$(addsuffix -impala,$(BENCHMARKS)): %-impala: setup
	$(SEED) train --config experiments/$*.yaml --arch impala --logdir results/$*/impala/$(RUN_ID) $(RUN_FLAGS)

$(addprefix compare-,$(BENCHMARKS)): compare-%: setup
	$(SEED) compare --config experiments/$*.yaml --mode $(MODE) \
	    --seconds $(or $(SECONDS),$(COMPARE_SECONDS)) --logdir results/compare-$*/$(MODE)-$(RUN_ID) \
	    $(if $(ACTORS),--actors $(ACTORS)) $(if $(ENVS),--envs-per-actor $(ENVS)) \
	    $(if $(TIMELINE),--timeline) $(if $(IDLE_POLL),--set cpu_idle_poll=true) \
	    $(if $(DTYPE),--compute-dtype $(DTYPE))
	$(PY) -m seed.plots.compare results/compare-$*/$(MODE)-$(RUN_ID)

$(addprefix roofline-,$(BENCHMARKS)): roofline-%: setup
	$(SEED) roofline --config experiments/$*.yaml $(if $(SECONDS),--seconds $(SECONDS)) \
	    $(if $(IDLE_POLL),--set cpu_idle_poll=true) $(if $(DTYPE),--compute-dtype $(DTYPE))

# Where the SEED learner's time goes: a sampling profile (py-spy, every thread) of a serve-mode
# run, written as a flame graph next to the run's own metrics.
$(addprefix profile-,$(BENCHMARKS)): profile-%: setup
	@mkdir -p results/profile-$*
	$(VENV)/bin/py-spy record --threads --rate 200 --format flamegraph \
	    -o results/profile-$*/seed-serve-$(RUN_ID).svg -- \
	    $(SEED) train --config experiments/$*.yaml --arch seed --set train=false \
	    --seconds $(or $(SECONDS),60) --frames 1000000000000 --no-progress \
	    --logdir results/profile-$*/seed-serve-$(RUN_ID)

SWEEP ?= small,medium,large
$(addprefix sweep-,$(BENCHMARKS)): sweep-%: setup
	$(SEED) compare --config experiments/$*.yaml --mode $(MODE) --sweep-network $(SWEEP) \
	    --seconds $(or $(SECONDS),30) --logdir results/compare-$*/sweep-$(MODE)-$(RUN_ID)

# Football benchmarks need the engine built first.
FOOTBALL := $(filter football%,$(BENCHMARKS))
$(FOOTBALL) $(addsuffix -impala,$(FOOTBALL)) $(addprefix compare-,$(FOOTBALL)) \
    $(addprefix roofline-,$(FOOTBALL)) $(addprefix sweep-,$(FOOTBALL)) $(addprefix profile-,$(FOOTBALL)): football-setup

# DeepMind Lab benchmarks need the engine built first (a no-op once it is).
DMLAB := $(filter dmlab_%,$(BENCHMARKS))
$(DMLAB) $(addsuffix -impala,$(DMLAB)) $(addprefix compare-,$(DMLAB)) \
    $(addprefix roofline-,$(DMLAB)) $(addprefix sweep-,$(DMLAB)) $(addprefix profile-,$(DMLAB)): dmlab-setup

dmlab: dmlab_seekavoid_arena_01

plots: setup
	$(PY) scripts/run_notebooks.py --results results --out results/plots

report: setup
	$(SEED) report --results results --out results/REPORT.md

clean:
	rm -rf .pytest_cache build *.egg-info seed/transport/seed_rl_pb2*.py
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
