"""Without gfootball, envs.football fails with an error that names the install command."""

import sys

import pytest


@pytest.mark.parametrize("name", ["academy_empty_goal_close", "11_vs_11_easy_stochastic"])
def test_missing_gfootball_names_the_install_script(monkeypatch, name):
    import envs
    from envs import football
    # A None entry in sys.modules makes `import gfootball...` raise ImportError.
    for module in [m for m in sys.modules if m == "gfootball" or m.startswith("gfootball.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "gfootball", None)
    monkeypatch.setitem(sys.modules, "gfootball.env", None)
    with pytest.raises(football.FootballNotInstalledError,
                       match="scripts/install_football.sh"):
        envs.make(f"football:{name}")
