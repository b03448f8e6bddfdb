exec {fd}>log 3<&0 2>&1 >&file &>x &>>y <>z >|w <<<"s $(id)" <<-E
	body
	E