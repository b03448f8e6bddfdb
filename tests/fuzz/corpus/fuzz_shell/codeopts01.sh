make -wC dir --ev='$(shell id)' CC=x -f - <<<'all:;id'
