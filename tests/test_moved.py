"""The old import names of the modules that moved into the tier folders (simul._moved): each
still imports, with a DeprecationWarning naming the new place, and is the very module at the
new name, so that objects, isinstance checks and pickles agree."""

import importlib
import pickle
import subprocess
import sys
import warnings

import pytest

from simul import _moved


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_an_old_name_is_the_new_module_with_a_warning(old):
    new = _moved.MOVED[old]
    # a fresh interpreter: here the old name may be imported already, and warns once only
    code = (f"import warnings, importlib; warnings.simplefilter('error')\n"
            f"try:\n    importlib.import_module({old!r})\n"
            f"except DeprecationWarning as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith(f"{old} moved to {new};"), out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert importlib.import_module(old) is importlib.import_module(new)


def test_a_submodule_of_a_moved_package_is_found_once():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import simul.claims.statistics as old
    import simul.analysis.claims.statistics as new

    assert old is new
    assert new.__spec__.name == "simul.analysis.claims.statistics"  # not the alias's spec
    assert sys.modules["simul.claims.statistics"] is new


def test_objects_pickled_under_either_name_load_as_the_same_class():
    from simul.decoding.session import Word

    word = Word(text="Haus", delay_ms=1200.0, elapsed_ms=1800.0)
    assert pickle.loads(pickle.dumps(word)) == word
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from simul.session import Word as OldWord
    assert OldWord is Word
    # a pickle that names the old module (written before the move) loads as today's class
    old_pickle = pickle.dumps(word, protocol=0).replace(b"simul.decoding.session",
                                                        b"simul.session")  # names as text
    assert b"simul.session" in old_pickle
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert pickle.loads(old_pickle) == word


def test_a_name_that_never_existed_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("simul.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("simul.claims.no_such_module")
