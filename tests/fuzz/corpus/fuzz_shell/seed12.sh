cat <<A <<'B'
$(a)
A
$(b)
B
echo \
foo # comment