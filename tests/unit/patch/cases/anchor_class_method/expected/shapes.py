class Square:
    def area(self):
        return self.n * self.n


class Circle:
    def perimeter(self):
        return 0

    def area(self):
        return 3.14159 * self.r * self.r
