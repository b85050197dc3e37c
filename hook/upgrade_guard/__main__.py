from upgrade_guard.cli import main

main()
