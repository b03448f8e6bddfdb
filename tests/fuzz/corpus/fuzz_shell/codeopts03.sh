sed -e 's/x/y/gw o' -e '1e id' -e '$!N;/a/I,+3{s,a,b,;y/ab/cd/}' f; awk '/a|b/ && $1 > 2 {print $1 > "o"; "id" | getline x; system("id")}' f
