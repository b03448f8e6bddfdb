cat <<EOF > f
hello $(whoami) `id`
EOF
echo done